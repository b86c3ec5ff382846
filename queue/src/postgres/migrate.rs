//! The schema, as numbered SQL files (`queue/migrations/NNNN_name.sql`) compiled into the
//! binary and applied in order, each once, recorded in `g16_migrations`.

use tokio_postgres::Client;

use super::db_error;
use crate::StoreResult;

pub(super) struct Migration {
    pub version: i32,
    pub name: &'static str,
    pub sql: &'static str,
}

/// Every migration, in order. A new one is a new file and a new line here (a test checks that
/// the two agree); an applied one is never edited, since databases that ran it keep its effect.
pub(super) const MIGRATIONS: &[Migration] =
    &[Migration { version: 1, name: "jobs", sql: include_str!("../../migrations/0001_jobs.sql") }];

/// The advisory lock that serialises migrations: the servers of a fleet start at once, and
/// each would otherwise try to create the same tables.
const MIGRATION_LOCK: i64 = 0x6731_365f_7175_6575;

/// Applies the migrations this database lacks, in one transaction (all or none); returns the
/// versions applied now. Versions the database has and this binary does not know (a newer
/// server's) are left alone: a fleet is upgraded one server at a time.
pub(super) async fn apply(client: &mut Client) -> StoreResult<Vec<i32>> {
    let tx = client.transaction().await.map_err(db_error)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).await.map_err(db_error)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS g16_migrations (
             version integer PRIMARY KEY,
             name text NOT NULL,
             applied timestamptz NOT NULL DEFAULT now()
         )",
    )
    .await
    .map_err(db_error)?;
    let rows = tx.query("SELECT version FROM g16_migrations", &[]).await.map_err(db_error)?;
    let mut known = Vec::with_capacity(rows.len());
    for row in &rows {
        known.push(row.try_get::<_, i32>(0).map_err(db_error)?);
    }
    let mut applied = Vec::new();
    for migration in MIGRATIONS.iter().filter(|m| !known.contains(&m.version)) {
        tx.batch_execute(migration.sql).await.map_err(db_error)?;
        tx.execute(
            "INSERT INTO g16_migrations (version, name) VALUES ($1, $2)",
            &[&migration.version, &migration.name],
        )
        .await
        .map_err(db_error)?;
        applied.push(migration.version);
    }
    tx.commit().await.map_err(db_error)?;
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::MIGRATIONS;

    #[test]
    fn every_file_is_listed_in_order() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .expect("queue/migrations")
            .map(|entry| entry.expect("a directory entry").file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".sql"))
            .collect();
        files.sort();
        let listed: Vec<String> = MIGRATIONS.iter().map(|m| format!("{:04}_{}.sql", m.version, m.name)).collect();
        assert_eq!(files, listed, "queue/migrations and MIGRATIONS disagree");
        for (i, migration) in MIGRATIONS.iter().enumerate() {
            assert_eq!(migration.version, i as i32 + 1, "versions are 1, 2, 3, …");
            let on_disk = std::fs::read_to_string(format!("{dir}/{}", listed[i])).expect("a migration file");
            assert_eq!(on_disk, migration.sql);
        }
    }
}

//! `g16 timeline report FILE`: the report of a saved timeline (TIMELINE text or Chrome trace).

use std::path::Path;

use crate::cli::CliError;

pub fn run(file: &Path, gap_warn: f64) -> Result<(), CliError> {
    let events = g16::timeline::read_file(file)?;
    if events.is_empty() {
        return Err(CliError::Usage(format!("{} holds no timeline events", file.display())));
    }
    print!("{}", g16::timeline::Report::from_events(&events).render(gap_warn / 100.0));
    Ok(())
}

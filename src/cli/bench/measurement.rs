//! What `g16 bench` records: one measurement per (backend, op, size), the JSON line
//! `benches/results/` keeps, and the table printed at the end.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use g16::backend::BackendInfo;
use serde::{Deserialize, Serialize};

use crate::cli::{io_err, stamp, CliError};

/// One measurement: the JSON line `benches/results/` keeps.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Measurement {
    pub backend: String,
    pub device: String,
    pub driver: String,
    pub op: String,
    pub size: u32,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    /// The first timed run: with `--warmup 0`, the first call after any preparation (a
    /// first proof, against the steady median).
    #[serde(default)]
    pub first_ms: f64,
    pub runs: usize,
    /// What the timed call includes and what it leaves out (inputs on the device or not).
    pub includes: String,
    pub commit: String,
    pub date: String,
    /// Median device time per span name over the timed runs (device backends; MSM and NTT):
    /// the whole operation's span (`msm_g1`) and its phases (`msm_g1.accumulate`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub phases_ms: BTreeMap<String, f64>,
    /// MSM ops: the bases' upload, once, with whatever the backend prepares there (the
    /// shifted bases of CUDA and wgpu), wall ms; outside `median_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bases_upload_ms: Option<f64>,
    /// The `G16_*` tuning variables the run was given (docs/tuning.md), as written; none:
    /// every setting at its default.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
}

/// Per span name, the median over the runs (a name missing from a run counts as 0 there).
pub fn median_phases(runs: &[BTreeMap<String, f64>]) -> BTreeMap<String, f64> {
    let names: std::collections::BTreeSet<&String> = runs.iter().flat_map(|r| r.keys()).collect();
    names
        .into_iter()
        .map(|name| {
            let times: Vec<f64> = runs.iter().map(|r| r.get(name).copied().unwrap_or(0.0)).collect();
            (name.clone(), median(&times))
        })
        .collect()
}

pub fn median(times: &[f64]) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[mid],
        _ => (sorted[mid - 1] + sorted[mid]) / 2.0,
    }
}

/// Appends one JSON line per measurement to `path`.
pub fn append_json(path: &Path, results: &[Measurement]) -> Result<(), CliError> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io_err(format!("opening {}", path.display())))?;
    for m in results {
        let line = serde_json::to_string(m).map_err(|e| CliError::Usage(e.to_string()))?;
        writeln!(f, "{line}").map_err(io_err(format!("writing {}", path.display())))?;
    }
    Ok(())
}

/// A measurement of `op` from its timed runs (warm-ups already cut).
pub fn measurement(info: &BackendInfo, op: &str, includes: &str, size: u32, times: &[f64]) -> Measurement {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    Measurement {
        backend: info.kind.name().to_string(),
        device: info.device.clone(),
        driver: info.driver.clone(),
        op: op.to_string(),
        size,
        median_ms: median(times),
        min_ms: sorted.first().copied().unwrap_or(0.0),
        max_ms: sorted.last().copied().unwrap_or(0.0),
        first_ms: times.first().copied().unwrap_or(0.0),
        runs: sorted.len(),
        includes: includes.to_string(),
        commit: stamp::COMMIT.to_string(),
        date: stamp::today_utc(),
        phases_ms: BTreeMap::new(),
        bases_upload_ms: None,
        settings: BTreeMap::new(),
    }
}

/// One row per (op, size), one column per backend; where the CPU ran too, each GPU
/// backend's speed-up over it.
pub fn print_table(results: &[Measurement]) {
    let mut backends: Vec<&str> = results.iter().map(|m| m.backend.as_str()).collect();
    backends.dedup();
    backends.sort();
    backends.dedup();
    let mut rows: Vec<(&str, u32)> = results.iter().map(|m| (m.op.as_str(), m.size)).collect();
    rows.sort();
    rows.dedup();
    print!("{:<14}{:>5}", "op", "size");
    for b in &backends {
        print!("{:>14}", format!("{b} ms"));
    }
    let has_cpu = backends.contains(&"cpu");
    if has_cpu {
        for b in backends.iter().filter(|b| **b != "cpu") {
            print!("{:>14}", format!("{b}/cpu"));
        }
    }
    println!();
    for (op, size) in rows {
        let get =
            |b: &str| results.iter().find(|m| m.op == op && m.size == size && m.backend == b).map(|m| m.median_ms);
        print!("{op:<14}{size:>5}");
        for b in &backends {
            match get(b) {
                Some(ms) => print!("{ms:>14.3}"),
                None => print!("{:>14}", "-"),
            }
        }
        if has_cpu {
            for b in backends.iter().filter(|b| **b != "cpu") {
                match (get("cpu"), get(b)) {
                    (Some(cpu), Some(ms)) if ms > 0.0 => print!("{:>13.1}x", cpu / ms),
                    _ => print!("{:>14}", "-"),
                }
            }
        }
        println!();
    }
    for m in results.iter().filter(|m| !m.phases_ms.is_empty()) {
        let phases: Vec<String> = m.phases_ms.iter().map(|(name, ms)| format!("{name} {ms:.2}")).collect();
        println!("  {} {} 2^{} device ms (median): {}", m.backend, m.op, m.size, phases.join(", "));
    }
    for m in results {
        if let Some(ms) = m.bases_upload_ms {
            println!("  {} {} 2^{} bases uploaded and prepared in {ms:.1} ms (once)", m.backend, m.op, m.size);
        }
    }
}

/// The measurements of a JSON-lines file `--json` wrote (lines of other shapes are refused).
pub fn read_json(path: &Path) -> Result<Vec<Measurement>, CliError> {
    let text = std::fs::read_to_string(path).map_err(io_err(format!("reading {}", path.display())))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line)
                .map_err(|e| CliError::Usage(format!("{}:{}: not a bench measurement: {e}", path.display(), i + 1)))
        })
        .collect()
}

/// Per (backend, op), time against size with each doubling's factor: how a cost grows.
pub fn print_scaling(results: &[Measurement]) {
    let mut series: BTreeMap<(&str, &str), Vec<(u32, f64)>> = BTreeMap::new();
    for m in results {
        series.entry((m.backend.as_str(), m.op.as_str())).or_default().push((m.size, m.median_ms));
    }
    for ((backend, op), mut points) in series {
        points.sort_by_key(|p| p.0);
        println!("{backend} {op}");
        println!("{:>6}{:>14}{:>12}", "size", "median ms", "×/doubling");
        let mut before: Option<(u32, f64)> = None;
        for &(size, ms) in &points {
            let factor = match before {
                Some((s, b)) if s + 1 == size && b > 0.0 => format!("{:.2}", ms / b),
                _ => "-".to_string(),
            };
            println!("{size:>6}{ms:>14.3}{factor:>12}");
            before = Some((size, ms));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use g16::backend::{Backend, CpuBackend};

    #[test]
    fn median_of_even_and_odd() {
        let info = CpuBackend::new().info();
        assert_eq!(measurement(&info, "ntt", "", 3, &[3.0, 1.0, 2.0]).median_ms, 2.0);
        assert_eq!(measurement(&info, "ntt", "", 3, &[4.0, 1.0, 2.0, 3.0]).median_ms, 2.5);
    }

    #[test]
    fn phases_take_the_median_per_name_and_count_a_missing_one_as_zero() {
        let run = |pairs: &[(&str, f64)]| pairs.iter().map(|(n, ms)| (n.to_string(), *ms)).collect();
        let runs: Vec<BTreeMap<String, f64>> = vec![
            run(&[("msm_g1", 10.0), ("msm_g1.sort", 1.0)]),
            run(&[("msm_g1", 12.0), ("msm_g1.sort", 3.0), ("big", 4.0)]),
            run(&[("msm_g1", 11.0), ("msm_g1.sort", 2.0)]),
        ];
        let phases = median_phases(&runs);
        assert_eq!(phases["msm_g1"], 11.0);
        assert_eq!(phases["msm_g1.sort"], 2.0);
        assert_eq!(phases["big"], 0.0);
        assert_eq!(phases.len(), 3);
    }
}

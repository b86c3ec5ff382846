//! The benchmark plot: median time against size, one line per (backend, op), log-scaled.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;

use super::measurement::Measurement;
use crate::cli::CliError;

/// The plot's title: every device and commit of the measurements, in the order first seen (a
/// plot drawn from several runs' files names each build it shows).
fn caption(results: &[Measurement]) -> String {
    let distinct = |field: fn(&Measurement) -> &str| {
        let mut seen: Vec<&str> = Vec::new();
        for m in results {
            if !seen.contains(&field(m)) {
                seen.push(field(m));
            }
        }
        seen.join(", ")
    };
    format!("g16 bench ({} @ {})", distinct(|m| &m.device), distinct(|m| &m.commit))
}

pub fn write_svg(path: &Path, results: &[Measurement]) -> Result<(), CliError> {
    let err = |e: &dyn std::fmt::Display| CliError::Usage(format!("plot {}: {e}", path.display()));
    if results.is_empty() {
        return Err(err(&"no measurements to plot"));
    }
    let mut series: BTreeMap<(String, String), Vec<(u32, f64)>> = BTreeMap::new();
    for m in results {
        series.entry((m.backend.clone(), m.op.clone())).or_default().push((m.size, m.median_ms.max(1e-3)));
    }
    let (min_size, max_size) = results.iter().fold((u32::MAX, 0), |(lo, hi), m| (lo.min(m.size), hi.max(m.size)));
    let (min_ms, max_ms) =
        results.iter().fold((f64::MAX, 0.0f64), |(lo, hi), m| (lo.min(m.median_ms.max(1e-3)), hi.max(m.median_ms)));

    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(caption(results), ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(min_size as f64 - 0.25..max_size as f64 + 0.25, (min_ms / 1.5..max_ms * 1.5).log_scale())
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("size (log2 of elements / constraints)")
        .y_desc("median ms (log)")
        .x_labels((max_size - min_size + 1) as usize)
        .x_label_formatter(&|x| format!("2^{}", x.round() as i64))
        .draw()
        .map_err(|e| err(&e))?;
    for (i, ((backend, op), mut points)) in series.into_iter().enumerate() {
        points.sort_by_key(|p| p.0);
        let color = Palette99::pick(i).to_rgba();
        let data: Vec<(f64, f64)> = points.iter().map(|(s, ms)| (*s as f64, *ms)).collect();
        chart
            .draw_series(LineSeries::new(data.clone(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(format!("{backend} {op}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        chart.draw_series(data.into_iter().map(|p| Circle::new(p, 3, color.filled()))).map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use g16::backend::{Backend, CpuBackend};

    #[test]
    fn caption_names_every_device_and_commit_once() {
        let info = CpuBackend::new().info();
        let at = |commit: &str, device: &str| {
            let mut m = super::super::measurement::measurement(&info, "ntt", "", 1, &[1.0]);
            (m.commit, m.device) = (commit.to_string(), device.to_string());
            m
        };
        let one = [at("a1", "H200"), at("a1", "H200")];
        assert_eq!(caption(&one), "g16 bench (H200 @ a1)");
        let mixed = [at("a1", "H200"), at("b2", "H200"), at("a1", "H100"), at("c3", "H200")];
        assert_eq!(caption(&mixed), "g16 bench (H200, H100 @ a1, b2, c3)");
    }
}

//! Progress bars for long steps, drawn on a terminal only: piped or redirected output stays clean.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

fn target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

/// A spinner with elapsed time, for a step of unknown length (setup, a large proof).
pub fn spinner(message: impl Into<String>) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, target()).with_message(message.into());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} [{elapsed}]") {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// A bar over `len` steps (partitions, benchmark cases).
pub fn bar(len: u64, message: impl Into<String>) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), target()).with_message(message.into());
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} [{elapsed}]") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

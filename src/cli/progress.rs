//! The spinner shown on stderr while a long step runs (nothing when stderr
//! is not a terminal, as in CI logs, or with `--quiet`).

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget};

/// A spinner saying `msg`, or `None` when quiet. Clear it with
/// [`ProgressBar::finish_and_clear`] before printing anything else.
pub fn spinner(quiet: bool, msg: String) -> Option<ProgressBar> {
    if quiet {
        return None;
    }
    let s = ProgressBar::new_spinner();
    s.set_draw_target(ProgressDrawTarget::stderr());
    s.set_message(msg);
    s.enable_steady_tick(Duration::from_millis(120));
    Some(s)
}

//! Logs: one file a day under `VYRE_HOME/logs/`, plus stderr.

use std::io::IsTerminal;

use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_appender::rolling::{Builder, Rotation};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::kernel::paths::VyreHome;

/// Lines the file writer's queue holds before it drops new ones. The writer thread drains it as
/// fast as the disk takes lines, so only a burst this long in one instant is lost (and counted
/// by the appender). The crate's default, 128,000, allocates and touches its whole queue up
/// front: 4 MiB resident in an idle daemon, a fifth of its memory.
const QUEUED_LINES: usize = 4096;

/// Keep the guard alive for as long as logs should be written; dropping it flushes the file.
pub fn init(home: &VyreHome, default_filter: Option<&str>) -> Result<WorkerGuard, String> {
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(default_filter.unwrap_or("info")))
        .map_err(|e| format!("invalid log filter: {e}"))?;
    let appender = Builder::new()
        .rotation(Rotation::DAILY)
        .filename_prefix("vyred")
        .filename_suffix("log")
        .max_log_files(14)
        .build(home.logs())
        .map_err(|e| format!("cannot open the log folder {}: {e}", home.logs().display()))?;
    let (file, guard) = NonBlockingBuilder::default()
        .buffered_lines_limit(QUEUED_LINES)
        .finish(appender);
    tracing_subscriber::registry()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(std::io::stderr().is_terminal())
                .with_writer(std::io::stderr),
        )
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(file),
        )
        .try_init()
        .map_err(|e| format!("cannot start logging: {e}"))?;
    Ok(guard)
}

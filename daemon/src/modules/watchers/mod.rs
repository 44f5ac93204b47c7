//! `watchers` (spec 7.6, issue 23; work in progress on this branch): scripts Claude writes that
//! Vyre runs on a schedule or a webhook, filing what they find into a project. So far: what a
//! watcher's folder declares ([`spec`]) and what a run says ([`protocol`]).

pub mod protocol;
pub mod run;
pub mod spec;
pub mod state;

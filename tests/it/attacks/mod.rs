//! The attack battery (issue 17, `../shared/briefs/threat-model.md`): each test plays one of the
//! attackers for real (a real session's Bash on the real CLI, a browser on another loopback
//! port, a hostile repository, a revoked device) and asserts the refusal and that nothing
//! changed. Every new module, tool, listener, file write and child process adds its attacks here.

mod asks;
mod brief;
mod browser;
mod common;
mod files;
mod finding;
mod hook;
mod limits;
mod onboarding;
mod passes;
mod peer;
mod planner;
mod settings;
mod terminal;
mod threads;
mod watchers;

//! Vyre-owned sessions (ADR 0030): the provider router, the Claude driver that speaks the Agent
//! SDK's wire protocol to the Claude Code CLI, and the Switchboard above them.
//!
//! Built so far: [`wire`] (the JSON-lines peer with the control protocol), [`spawn`] (the one
//! place session processes start), [`claude`] (the Claude driver).

pub mod about;
pub mod acp;
pub mod agent_process;
pub mod agents;
pub mod always;
pub mod caution;
pub mod changes;
pub mod claude;
pub mod claude_mcp;
pub mod claude_provider;
pub mod claude_translate;
pub mod claude_warm;
pub mod codex;
pub mod conformance;
pub mod files;
pub mod finding;
pub mod jsonl;
pub mod kept;
pub mod mcp_forms;
pub mod models;
pub mod npm_cli;
pub mod pinned;
pub mod recent_folders;
pub mod register;
pub mod router;
pub mod rows;
pub mod rpc;
pub mod sandbox;
pub mod slots;
pub mod spare_checks;
pub mod spawn;
pub mod switchboard;
pub mod timeline;
pub mod wire;
pub mod worktree;

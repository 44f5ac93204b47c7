//! Integration tests: a real vyred on a temp `VYRE_HOME`, driven through its socket, its HTTP
//! listener and the `vyre` binary. One test binary, so CI links once.

mod support;

mod adopt;
mod agents;
mod api;
mod attacks;
mod claude_e2e;
mod crash_cycles;
mod events;
mod faults;
mod files;
mod first_run;
use vyre_fake_api as fake_api;
mod fake_provider;
mod harness;
mod home;
mod layers;
mod lifecycle;
mod link;
mod link_back;
mod link_stream;
mod mcp;
mod memory;
mod modules;
mod names;
mod network;
mod openapi;
mod pairing;
mod projects;
mod providers;
mod push;
mod recall;
mod recall_dense;
mod router;
mod slots;
mod threads_asks;
mod threads_bad;
mod threads_cli;
mod threads_crash;
mod threads_e2e;
mod threads_finding;
mod threads_flow;
mod timeline;
mod upgrade;
mod vault;
mod web;

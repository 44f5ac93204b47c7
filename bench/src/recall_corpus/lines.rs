//! The lines of a transcript, in the shape of the real CLI's: the fields every conversation
//! line ends with, and a writer for each kind of line (prompts, replies, tool calls, attachments,
//! request blobs, bookkeeping).

use super::Transcript;
use super::words::{Filler, Rng, Vocabulary};

/// The CLI release the lines imitate.
pub const VERSION: &str = "2.1.328";

/// JSON string literal.
pub(super) fn js(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// `2026-01-01T00:00:00.000Z` from milliseconds since the epoch (Howard Hinnant's algorithm).
pub fn iso(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// The fields every conversation line of a session ends with.
pub(super) struct Session {
    pub(super) id: String,
    pub(super) cwd: String,
    /// Milliseconds since the epoch of the next line.
    pub(super) now: i64,
    /// The uuid of the last conversation line, the next one's parent.
    pub(super) parent: Option<String>,
}

impl Session {
    pub(super) fn tail(&self) -> String {
        format!(
            r#""userType":"external","entrypoint":"cli","cwd":{},"sessionId":"{}","version":"{VERSION}","gitBranch":"main"}}"#,
            js(&self.cwd),
            self.id
        )
    }

    /// The timestamp of the next line; time moves on by up to `step_ms`.
    pub(super) fn tick(&mut self, rng: &mut Rng, step_ms: usize) -> String {
        self.now += rng.range(1, step_ms) as i64;
        iso(self.now)
    }

    pub(super) fn parent_json(&self) -> String {
        self.parent
            .as_deref()
            .map_or_else(|| "null".to_string(), |p| format!("\"{p}\""))
    }
}

/// Writes one transcript's lines.
pub(super) struct Writer<'a> {
    pub(super) rng: &'a mut Rng,
    pub(super) vocab: &'a Vocabulary,
    pub(super) filler: &'a Filler,
    pub(super) out: String,
    pub(super) lines: u64,
}

impl Writer<'_> {
    pub(super) fn line(&mut self, l: &str) {
        self.out.push_str(l);
        self.out.push('\n');
        self.lines += 1;
    }

    pub(super) fn queue_operations(&mut self, s: &mut Session) {
        for op in ["enqueue", "dequeue"] {
            let ts = s.tick(self.rng, 3);
            self.line(&format!(
                r#"{{"type":"queue-operation","operation":"{op}","timestamp":"{ts}","sessionId":"{}"}}"#,
                s.id
            ));
        }
    }

    pub(super) fn prompt(&mut self, s: &mut Session, text: &str, turn: usize) {
        let uuid = self.rng.uuid();
        let prompt_id = self.rng.uuid();
        let ts = s.tick(self.rng, 40);
        let line = format!(
            r#"{{"parentUuid":{},"isSidechain":false,"promptId":"{prompt_id}","type":"user","message":{{"role":"user","content":[{{"text":{},"type":"text"}}]}},"uuid":"{uuid}","timestamp":"{ts}","permissionMode":"default","promptSource":"cli","turnOrigin":"cli","turnPosition":{{"promptIndex":0,"turnIndex":{turn}}},"turnAttributionKey":"{uuid}",{}"#,
            s.parent_json(),
            js(text),
            s.tail()
        );
        self.line(&line);
        s.parent = Some(uuid);
    }

    /// An attachment line: context the CLI adds, never words.
    pub(super) fn attachment(&mut self, s: &mut Session, attachment: &str, rendered: &str) {
        let uuid = self.rng.uuid();
        let ts = s.tick(self.rng, 5);
        let line = format!(
            r#"{{"parentUuid":{},"isSidechain":false,"attachment":{attachment},"type":"attachment","uuid":"{uuid}","timestamp":"{ts}","rendered":[{{"content":{}}}],"renderedRole":"system",{}"#,
            s.parent_json(),
            js(rendered),
            s.tail()
        );
        self.line(&line);
        s.parent = Some(uuid);
    }

    /// The attachments of a session's first prompt: environment, model, tool and skill
    /// listings (the skill listing is several KB), context, date.
    pub(super) fn first_attachments(&mut self, s: &mut Session) {
        let env = format!(
            r#"{{"type":"environment","snapshot":{{"workingDirectory":{},"isWorktree":false,"isGitRepo":true,"additionalWorkingDirectories":[],"platform":"linux","shell":"bash","osVersion":"Linux 6.18.44"}}}}"#,
            js(&s.cwd)
        );
        let rendered = format!(
            "<system-reminder>\n# Environment\nYou have been invoked in the following environment: \n - Primary working directory: {}\n - Is a git repository: true\n - Platform: linux\n - Shell: bash\n - {}\n</system-reminder>",
            s.cwd,
            self.filler.slice(self.rng, 700)
        );
        self.attachment(s, &env, &rendered);
        self.attachment(
            s,
            r#"{"type":"model","identity":{"modelId":"claude-opus-5-5","marketingName":"Opus 5.5","knowledgeCutoff":"June 2026"},"text":"You are powered by the model named Opus 5.5. The exact model ID is claude-opus-5-5. Assistant knowledge cutoff is June 2026."}"#,
            "<system-reminder>\nYou are powered by the model named Opus 5.5. The exact model ID is claude-opus-5-5. Assistant knowledge cutoff is June 2026.\n</system-reminder>",
        );
        for (kind, lo, hi) in [
            ("deferred_tools_delta", 900, 1_600),
            ("agent_listing_delta", 1_500, 2_500),
            ("skill_listing", 6_000, 14_000),
        ] {
            let size = self.rng.range(lo, hi);
            let body = format!("<system-reminder>\n{}\n</system-reminder>", {
                self.filler.slice(self.rng, size)
            });
            self.attachment(s, &format!(r#"{{"type":"{kind}"}}"#), &body);
        }
        self.line(&format!(
            r#"{{"type":"atis-latch","atis":"","sessionId":"{}"}}"#,
            s.id
        ));
        self.attachment(s, r#"{"type":"session_context","context":{}}"#, "");
        let date = iso(s.now)[..10].to_string();
        self.attachment(
            s,
            &format!(r#"{{"type":"date","date":"{date}"}}"#),
            &format!("<system-reminder>\nToday's date is {date}.\n</system-reminder>"),
        );
    }

    /// A request blob: one message of an API request, kept by hash.
    pub(super) fn blob(&mut self, s: &Session, role: &str, text: &str) -> String {
        let hash = self.rng.hex(64);
        let line = format!(
            r#"{{"type":"api-request-blob","sessionId":"{}","hash":"{hash}","message":{{"role":"{role}","content":[{{"type":"text","text":{}}}]}}}}"#,
            s.id,
            js(text)
        );
        self.line(&line);
        hash
    }

    /// An API request: its shape when it changed, its new blobs, then the request line.
    pub(super) fn request(
        &mut self,
        s: &mut Session,
        blobs: &[(&str, String)],
        shape: Option<usize>,
    ) {
        let shape_hash = self.rng.hex(64);
        let ts = s.tick(self.rng, 20);
        if let Some(size) = shape {
            let shape = self.filler.slice(self.rng, size).to_string();
            self.line(&format!(
                r#"{{"type":"api-request-shape","sessionId":"{}","shapeHash":"{shape_hash}","timestamp":"{ts}","version":"{VERSION}","shape":{}}}"#,
                s.id,
                js(&shape)
            ));
        }
        let hashes: Vec<String> = blobs
            .iter()
            .map(|(role, text)| format!("\"{}\"", self.blob(s, role, text)))
            .collect();
        let id = self.rng.uuid();
        let digest = self.rng.hex(64);
        self.line(&format!(
            r#"{{"type":"api-request","sessionId":"{}","id":"{id}","timestamp":"{ts}","version":"{VERSION}","querySource":"repl_main_thread","shapeHash":"{shape_hash}","params":{{"model":"claude-opus-5-5","betas":["claude-code-20250219","interleaved-thinking-2025-05-14","context-management-2025-06-27","per-turn-control-2026-07-01","mid-conversation-tool-changes-2026-07-01","thinking-token-count-2026-05-13","advanced-tool-use-2025-11-20","effort-2025-11-24","thinking-display-updates-2026-08-18"],"max_tokens":128000,"thinking":{{"type":"adaptive","display":"updates"}},"context_management":{{"edits":[{{"type":"clear_thinking_20251015","keep":"all"}}]}},"output_config":{{"effort":"medium"}}}},"keep":0,"tail":[{}],"cacheControl":[{{"path":["system",0],"value":{{"type":"ephemeral"}}}},{{"path":["system",1],"value":{{"type":"ephemeral"}}}},{{"path":["messages",1,"content",0],"value":{{"type":"ephemeral"}}}}],"requestDigest":"{digest}"}}"#,
            s.id,
            hashes.join(",")
        ));
    }

    /// One assistant line: one content block of message `message`.
    pub(super) fn assistant(&mut self, s: &mut Session, message: &str, block: &str, stop: &str) {
        let uuid = self.rng.uuid();
        let ts = s.tick(self.rng, 30_000);
        let request = self.rng.hex(24);
        let out_tokens = self.rng.range(8, 2_000);
        let line = format!(
            r#"{{"parentUuid":{},"isSidechain":false,"message":{{"content":[{block}],"id":"{message}","model":"claude-opus-5-5","role":"assistant","stop_reason":"{stop}","stop_sequence":null,"type":"message","usage":{{"input_tokens":6,"cache_creation_input_tokens":812,"cache_read_input_tokens":41234,"output_tokens":{out_tokens},"output_tokens_details":{{"thinking_tokens":0}},"server_tool_use":{{"web_search_requests":0,"web_fetch_requests":0}},"service_tier":"standard","cache_creation":{{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":812}},"inference_geo":"","iterations":[],"speed":"standard","fallback_credit":null}},"stop_details":null}},"apiBlockIndex":0,"requestId":"req_{request}","requestedModel":"claude-opus-5-5","promptCacheRequested":"5m","type":"assistant","uuid":"{uuid}","timestamp":"{ts}","effort":"medium","perTurnEffort":"medium","madeBy":"model",{}"#,
            s.parent_json(),
            s.tail()
        );
        self.line(&line);
        s.parent = Some(uuid);
    }

    pub(super) fn message_id(&mut self) -> String {
        format!("msg_{}", self.rng.hex(24))
    }

    /// A Bash call and its result: the tool_use line, `tools-used`, the result (the output twice,
    /// as the CLI keeps it), the request that sends it back.
    pub(super) fn tool_call(&mut self, s: &mut Session, message: &str) {
        let tool = format!("toolu_{}", self.rng.hex(24));
        let command = format!(
            "cargo test -p {} {}",
            self.vocab.common(self.rng),
            self.vocab.common(self.rng)
        );
        self.assistant(
            s,
            message,
            &format!(
                r#"{{"id":"{tool}","input":{{"command":{},"description":"Run the tests"}},"name":"Bash","type":"tool_use"}}"#,
                js(&command)
            ),
            "tool_use",
        );
        self.line(&format!(
            r#"{{"type":"tools-used","tools":["Bash"],"sessionId":"{}"}}"#,
            s.id
        ));
        let size = self.rng.length(900.0, 0.9, 60, 12_000);
        let output = self.filler.slice(self.rng, size).to_string();
        let uuid = self.rng.uuid();
        let ts = s.tick(self.rng, 8_000);
        let tool_use_parent = s.parent_json();
        let line = format!(
            r#"{{"parentUuid":{tool_use_parent},"isSidechain":false,"promptId":"{}","type":"user","message":{{"role":"user","content":[{{"tool_use_id":"{tool}","type":"tool_result","content":{},"is_error":false}}]}},"uuid":"{uuid}","timestamp":"{ts}","toolUseResult":{{"stdout":{},"stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}},"sandboxed":false,"sourceToolAssistantUUID":{tool_use_parent},"permissionDecision":{{"decision":"accept","source":"config","reasonType":"subcommandResults"}},{}"#,
            self.rng.uuid(),
            js(&output),
            js(&output),
            s.tail()
        );
        self.line(&line);
        s.parent = Some(uuid);
        let shape = self.rng.chance(0.1).then(|| self.rng.range(800, 3_000));
        self.request(s, &[("assistant", command), ("user", output)], shape);
    }
}

/// A prompt line for `t`, to append: the shape of the CLI's, with `text`.
pub fn prompt_line(rng: &mut Rng, t: &Transcript, text: &str, at_ms: i64) -> String {
    let uuid = rng.uuid();
    format!(
        r#"{{"parentUuid":null,"isSidechain":false,"promptId":"{}","type":"user","message":{{"role":"user","content":[{{"text":{},"type":"text"}}]}},"uuid":"{uuid}","timestamp":"{}","permissionMode":"default","promptSource":"cli","turnOrigin":"cli","turnPosition":{{"promptIndex":0,"turnIndex":1}},"turnAttributionKey":"{uuid}","userType":"external","entrypoint":"cli","cwd":{},"sessionId":"{}","version":"{VERSION}","gitBranch":"main"}}"#,
        rng.uuid(),
        js(text),
        iso(at_ms),
        js(&t.cwd),
        t.session
    ) + "\n"
}

//! The one MCP stdio client of the suite: a live `okf-mcp serve` child with piped stdin,
//! stdout and stderr. It speaks JSON values (`request`, `call`), verbatim lines
//! (`request_raw`, for the golden transcripts) and raw bytes (`send`, `write`, `call_raw`,
//! for the framing and raw-argument tests), tolerates the server dying (`try_read`), and
//! can kill, signal and time-box the process.
//!
//! Every message read is checked: one JSON-RPC 2.0 object per line, no host temp path in
//! what the server authors (SEC-04), and while waiting for a response every other message
//! must be a notification.

#![allow(dead_code)]

use crate::support::util::{assert_no_host_path_in_result, bin};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// A live `okf-mcp serve` session over stdio.
pub struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The id [`Mcp::send_request`] gives the next request (`initialize` takes 1).
    next_id: i64,
}

impl Mcp {
    /// Spawns the server and completes `initialize`.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Spawns the server with extra environment variables (the `fault-injection` hooks) and
    /// completes `initialize`.
    pub fn start_with(env: &[(&str, &str)]) -> Self {
        let mut s = Self::spawn(env);
        s.initialize();
        s.send_json(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        s
    }

    /// Spawns `okf-mcp serve <args…>` (e.g. `--root`, `--read-only`) and completes
    /// `initialize`.
    pub fn start_serve(args: &[&str]) -> Self {
        let mut s = Self::spawn_serve(args, &[]);
        s.initialize();
        s.send_json(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        s
    }

    /// Sends `initialize` (protocol 2025-11-25, no client capabilities), asserts the answer
    /// comes from okf-mcp and returns it; `notifications/initialized` is the caller's to send.
    pub fn initialize(&mut self) -> Value {
        let init = self.request(
            "initialize",
            json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"it","version":"1"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "okf-mcp", "{init}");
        init
    }

    /// Spawns `okf-mcp serve` with extra environment variables and sends nothing.
    pub fn spawn(env: &[(&str, &str)]) -> Self {
        Self::spawn_serve(&[], env)
    }

    /// Spawns `okf-mcp serve <args…>` with extra environment variables and sends nothing.
    pub fn spawn_serve(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(bin());
        cmd.arg("serve")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn okf-mcp serve");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Self {
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    /// Writes `bytes` as they are.
    pub fn write(&mut self, bytes: &[u8]) {
        let si = self.stdin.as_mut().expect("stdin open");
        si.write_all(bytes).expect("write");
        si.flush().expect("flush");
    }

    /// Writes `bytes` and a newline: one line, whatever it holds.
    pub fn send(&mut self, bytes: &[u8]) {
        let si = self.stdin.as_mut().expect("stdin open");
        si.write_all(bytes).expect("write");
        si.write_all(b"\n").expect("write");
        si.flush().expect("flush");
    }

    /// Writes `v` as one line.
    pub fn send_json(&mut self, v: &Value) {
        self.send(v.to_string().as_bytes());
    }

    /// Sends a request with the next id and returns that id, without reading.
    pub fn send_request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.send_json(&json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}));
        id
    }

    /// Closes stdin (EOF for the server); the session can still read.
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// The next stdout line verbatim and parsed, or `None` once the server closed stdout.
    fn next_line(&mut self) -> Option<(String, Value)> {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).expect("read");
        if n == 0 {
            return None;
        }
        assert_no_host_path_in_result(&line);
        let v: Value = serde_json::from_str(&line).expect("stdout carries only JSON-RPC");
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        Some((line, v))
    }

    /// The next JSON-RPC message, or `None` when the server closed stdout (it exited or
    /// crashed).
    pub fn try_read(&mut self) -> Option<Value> {
        self.next_line().map(|(_, v)| v)
    }

    /// Reads the next JSON-RPC message.
    pub fn read(&mut self) -> Value {
        self.try_read().expect("server closed stdout")
    }

    /// Every line read up to and including the response to `id`, verbatim; every other
    /// message must be a notification.
    pub fn read_until(&mut self, id: &Value) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let (line, m) = self.next_line().expect("server closed stdout");
            lines.push(line);
            if &m["id"] == id {
                return lines;
            }
            assert!(m.get("id").is_none(), "unexpected response {m}");
        }
    }

    /// Reads messages until the one with `id`; every other message must be a notification.
    pub fn read_id(&mut self, id: &Value) -> Value {
        let lines = self.read_until(id);
        serde_json::from_str(lines.last().expect("a response")).expect("JSON-RPC")
    }

    /// Sends a request and reads until its response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.read_id(&id)
    }

    /// Sends a request and returns every line read up to and including its response, verbatim
    /// (the golden transcripts pin the bytes, not the parsed value).
    pub fn request_raw(&mut self, method: &str, params: Value) -> Vec<String> {
        let id = self.send_request(method, params);
        self.read_until(&id)
    }

    /// `tools/call`; returns the JSON-RPC `result` (or the whole message on a protocol error).
    pub fn call(&mut self, tool: &str, args: &Value) -> Value {
        let m = self.request("tools/call", json!({"name": tool, "arguments": args}));
        if m.get("result").is_some() {
            m["result"].clone()
        } else {
            m
        }
    }

    /// Sends a `tools/call` with the caller's `id` whose `params.arguments` is exactly `args`
    /// and returns the JSON-RPC message answering `id`.
    pub fn call_raw(&mut self, id: i64, tool: &str, args: &[u8]) -> Value {
        self.send(&tools_call_frame(id, tool, args));
        self.read_id(&json!(id))
    }

    /// SIGKILL, then reaps the process.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL");
        let _ = self.child.wait();
    }

    /// Sends the signal `sig` (`TERM`, `INT`, …) with kill(1).
    pub fn signal(&self, sig: &str) {
        let st = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill");
        assert!(st.success());
    }

    /// Waits for the process to exit and returns its exit code, or kills it and returns
    /// `None` after `within`; a hang detector, not a speed assertion.
    pub fn wait_exit(&mut self, within: Duration) -> Option<i32> {
        let start = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                return Some(st.code().unwrap_or(-1));
            }
            if start.elapsed() > within {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes stdin, reads the rest of stdout and waits: (exit code, rest of stdout, stderr).
    pub fn finish(mut self) -> (i32, String, String) {
        self.close_stdin();
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).expect("read rest");
        let out = self.child.wait_with_output().expect("wait");
        (
            out.status.code().unwrap_or(-1),
            rest,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// `{"jsonrpc":"2.0","id":<id>,"method":"tools/call","params":{"name":<tool>,"arguments":<args>}}`
/// with `args` spliced in as raw bytes.
pub fn tools_call_frame(id: i64, tool: &str, args: &[u8]) -> Vec<u8> {
    let mut f = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":"#
    )
    .into_bytes();
    f.extend_from_slice(args);
    f.extend_from_slice(b"}}");
    f
}

//! A terminal program driven in tmux, for the tests of `scope-prof`'s
//! terminal views: a tmux server of the test's own (`-L`, so no other
//! session is touched), one session running the command, its screen read
//! with `capture-pane` and keys sent with `send-keys`.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Whether tmux runs here (`tmux -V`).
pub fn available() -> bool {
    Command::new("tmux").arg("-V").output().is_ok()
}

/// One tmux session running a command in a `width` x `height` terminal;
/// its server is killed when this is dropped.
pub struct Tmux {
    socket: String,
    session: String,
}

impl Tmux {
    /// Starts `command` (a shell command line) in session `session` of a
    /// server of its own, named after `session` and this process.
    ///
    /// # Panics
    /// If tmux cannot start the session.
    pub fn start(session: &str, width: u16, height: u16, command: &str) -> Tmux {
        let tmux = Tmux {
            socket: format!("sp-{session}-{}", std::process::id()),
            session: session.to_string(),
        };
        let (w, h) = (width.to_string(), height.to_string());
        let started = tmux.run(&[
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            &w,
            "-y",
            &h,
            command,
        ]);
        assert!(started.status.success(), "{started:?}");
        tmux
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    /// The screen now.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(
            &self
                .run(&["capture-pane", "-p", "-t", &self.session])
                .stdout,
        )
        .into_owned()
    }

    /// Waits (up to 20 s) for the screen to hold `text`; returns it.
    ///
    /// # Panics
    /// If it does not within 20 s (the message shows the screen).
    pub fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no {text:?} on the screen after 20 s:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Sends `keys` (tmux key names: `"Down"`, `"Enter"`, `"q"`...).
    ///
    /// # Panics
    /// If tmux refuses them.
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.session];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success());
    }

    /// Whether the session (its command) still runs.
    pub fn alive(&self) -> bool {
        self.run(&["has-session", "-t", &self.session])
            .status
            .success()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// Keeps `screen` as `dir/name`, to be read after the run.
///
/// # Panics
/// If it cannot be written.
pub fn keep(dir: &Path, name: &str, screen: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), screen).unwrap();
}

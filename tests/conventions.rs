//! The conventions of a command-line tool (issue 23): colour only where it may be (clap's
//! help and errors, on a terminal, unless `NO_COLOR`), none in simstore's own output even
//! on a terminal; shell completions and a man page generated from the argument parser.

use std::process::Command;

use crate::util::{TestCommand, code, stderr};

/// Whether `text` holds an ANSI style sequence (SGR: `ESC [ ... m`).
fn styled(text: &str) -> bool {
    text.split('\x1b').skip(1).any(|s| {
        s.strip_prefix('[').is_some_and(|rest| {
            let end = rest.find(|c: char| !(c.is_ascii_digit() || c == ';'));
            end.is_some_and(|i| rest[i..].starts_with('m'))
        })
    })
}

/// Runs `line` (a shell command line; `$SIMSTORE` is the binary) on a pseudo-terminal
/// (util-linux `script`), in `t`'s directory with its store, and returns what the terminal
/// showed. `no_color` sets `NO_COLOR=1`.
fn on_a_terminal(t: &TestCommand, line: &str, no_color: bool) -> String {
    let mut c = Command::new("script");
    c.args(["-qec", line, "/dev/null"])
        .current_dir(t.path(""))
        .env("SIMSTORE", env!("CARGO_BIN_EXE_simstore"))
        .env("SIMSTORE_DB", t.db())
        .env("TERM", "xterm-256color")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("NO_COLOR");
    if no_color {
        c.env("NO_COLOR", "1");
    }
    let o = c
        .output()
        .expect("util-linux `script` runs a command on a pseudo-terminal");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A store holding two documents 1 bit apart, with titles.
fn store_with_a_pair() -> TestCommand {
    let t = TestCommand::new();
    t.write(
        "in.jsonl",
        "{\"id\":\"a\",\"fp\":\"00000000000000ff\",\"title\":\"Page A\"}\n\
         {\"id\":\"b\",\"fp\":\"00000000000000fe\",\"title\":\"Page B\"}\n"
            .as_bytes(),
    );
    let o = t.run(&["import", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    t
}

#[test]
fn help_and_errors_are_styled_on_a_terminal_unless_no_color() {
    let t = TestCommand::new();
    let help = on_a_terminal(&t, "\"$SIMSTORE\" --help", false);
    assert!(help.contains("Usage"), "{help}");
    assert!(styled(&help), "help on a terminal is styled: {help:?}");
    let plain = on_a_terminal(&t, "\"$SIMSTORE\" --help", true);
    assert!(plain.contains("Usage") && !styled(&plain), "{plain:?}");
    let error = on_a_terminal(&t, "\"$SIMSTORE\" query --k nine", false);
    assert!(
        error.contains("invalid value") && styled(&error),
        "{error:?}"
    );
    let error = on_a_terminal(&t, "\"$SIMSTORE\" query --k nine", true);
    assert!(
        error.contains("invalid value") && !styled(&error),
        "{error:?}"
    );
}

#[test]
fn help_into_a_pipe_is_plain_and_clicolor_force_styles_it() {
    let t = TestCommand::new();
    let help = |force: bool, no_color: bool| {
        let mut c = t.command(&["--help"]);
        c.env_remove("NO_COLOR").env_remove("CLICOLOR");
        c.env_remove("CLICOLOR_FORCE");
        if force {
            c.env("CLICOLOR_FORCE", "1");
        }
        if no_color {
            c.env("NO_COLOR", "1");
        }
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    assert!(!styled(&help(false, false)));
    assert!(styled(&help(true, false)));
    // NO_COLOR wins over CLICOLOR_FORCE.
    assert!(!styled(&help(true, true)));
    // --help documents both.
    let text = help(false, false);
    assert!(
        text.contains("NO_COLOR=1") && text.contains("CLICOLOR_FORCE=1"),
        "{text}"
    );
}

#[test]
fn simstore_colours_none_of_its_own_output_on_a_terminal() {
    let t = store_with_a_pair();
    // query's header line and dedup's readable groups appear only on a terminal: they
    // are there, and plain.
    let query = on_a_terminal(&t, "\"$SIMSTORE\" query --k 3 --fp 00000000000000ff", false);
    assert!(
        query.contains("distance") && query.contains("Page B"),
        "{query:?}"
    );
    assert!(!styled(&query), "{query:?}");
    let dedup = on_a_terminal(&t, "\"$SIMSTORE\" dedup", false);
    assert!(
        dedup.contains("Page A") && dedup.contains("Page B"),
        "{dedup:?}"
    );
    assert!(!styled(&dedup), "{dedup:?}");
    // import's progress bar draws on the terminal, uncoloured.
    t.write(
        "more.jsonl",
        b"{\"id\":\"c\",\"fp\":\"0f00000000000000\"}\n",
    );
    let import = on_a_terminal(&t, "\"$SIMSTORE\" import more.jsonl", false);
    assert!(!styled(&import), "{import:?}");
}

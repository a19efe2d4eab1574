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

/// The subcommands `simstore --help` lists (clap's `help` aside).
fn subcommands(t: &TestCommand) -> Vec<String> {
    let help = String::from_utf8(t.run(&["--help"]).stdout).unwrap();
    let list = help.split("Commands:\n").nth(1).unwrap();
    let names = list.lines().take_while(|l| l.starts_with("  "));
    let names = names
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned);
    let names: Vec<String> = names.filter(|n| n != "help").collect();
    assert!(names.len() > 10, "{help}");
    names
}

/// What the bash completion offers for `words` (the last one is under the cursor), run in
/// `t`'s directory.
fn bash_complete(t: &TestCommand, script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let o = Command::new("bash")
        .arg("-c")
        .arg(
            "source \"$1\"; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _simstore; \
             printf '%s\\n' \"${COMPREPLY[@]}\"",
        )
        .arg("bash")
        .arg(script)
        .args(words)
        .current_dir(t.path(""))
        .output()
        .expect("bash runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let mut got: Vec<String> = out
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    got.sort();
    got
}

/// `simstore completions SHELL`, checked to succeed.
fn completions(t: &TestCommand, shell: &str) -> String {
    let o = t.run(&["completions", shell]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn bash_completes_subcommands_flags_and_their_values() {
    let t = TestCommand::new();
    let script = t.write("simstore.bash", completions(&t, "bash").as_bytes());
    let complete = |words: &[&str]| bash_complete(&t, &script, words);
    let mut all = subcommands(&t);
    assert!(all.iter().any(|c| c == "completions") && all.iter().any(|c| c == "man"));
    all.push("help".into());
    all.sort();
    assert_eq!(complete(&["simstore", ""]), all);
    assert_eq!(complete(&["simstore", "imp"]), ["import"]);
    assert_eq!(complete(&["simstore", "import", "--fo"]), ["--format"]);
    let formats = ["auto", "html", "jsonl", "text", "warc"];
    assert_eq!(complete(&["simstore", "import", "--format", ""]), formats);
    // The global --db and its value come before the subcommand.
    let words = ["simstore", "--db", "x.db", "export", "--format", ""];
    assert_eq!(complete(&words), ["csv", "jsonl"]);
    assert_eq!(
        complete(&["simstore", "completions", ""]),
        ["bash", "fish", "zsh"]
    );
    // A number has nothing to offer; an input is a file.
    assert!(complete(&["simstore", "query", "--k", ""]).is_empty());
    t.write("pages.jsonl", b"");
    assert_eq!(complete(&["simstore", "import", "pag"]), ["pages.jsonl"]);
    assert!(complete(&["simstore", "serve", "--"]).contains(&"--port".to_owned()));
}

#[test]
fn zsh_and_fish_scripts_cover_every_subcommand_and_value() {
    let t = TestCommand::new();
    let zsh = completions(&t, "zsh");
    let fish = completions(&t, "fish");
    assert!(zsh.starts_with("#compdef simstore\n"), "{zsh}");
    assert!(zsh.trim_end().ends_with("_simstore \"$@\""), "{zsh}");
    for name in subcommands(&t) {
        assert!(
            zsh.contains(&format!("\n        '{name}:")),
            "zsh lacks {name}"
        );
        assert!(
            zsh.contains(&format!("\n                {name})\n")),
            "zsh lacks {name}"
        );
        let line = format!("complete -c simstore -n __fish_use_subcommand -a {name} -d '");
        assert!(fish.contains(&line), "fish lacks {name}");
    }
    assert!(zsh.contains("'--format[") && zsh.contains(":(auto jsonl text html warc)'"));
    let fish_format =
        "-n '__fish_seen_subcommand_from import' -l format -r -f -a 'auto jsonl text html warc'";
    assert!(fish.contains(fish_format), "{fish}");
    // Quotes in descriptions are escaped for each shell ("the store's size").
    assert!(zsh.contains("store'\\''s size"), "{zsh}");
    assert!(fish.contains("store\\'s size"), "{fish}");
    // Every quote is closed: an even number of unescaped single quotes per line.
    for line in zsh.lines() {
        let quotes = line.replace("'\\''", "").matches('\'').count();
        assert_eq!(quotes % 2, 0, "zsh: {line}");
    }
    for line in fish.lines() {
        let quotes = line.replace("\\'", "").matches('\'').count();
        assert_eq!(quotes % 2, 0, "fish: {line}");
    }
}

/// The roff requests the man page may use.
const REQUESTS: [&str; 9] = ["TH", "SH", "SS", "TP", "PP", "br", "nf", "fi", "nh"];

#[test]
fn the_man_page_documents_every_subcommand() {
    let t = TestCommand::new();
    let o = t.run(&["man"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let page = String::from_utf8(o.stdout).unwrap();
    assert!(page.starts_with(".TH SIMSTORE 1 "), "{page}");
    for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS"] {
        assert!(page.contains(&format!("\n.SH {section}\n")), "no {section}");
    }
    for section in ["EXIT STATUS", "ENVIRONMENT"] {
        assert!(
            page.contains(&format!("\n.SH \"{section}\"\n"))
                || page.contains(&format!("\n.SH {section}\n"))
        );
    }
    for name in subcommands(&t) {
        assert!(
            page.contains(&format!("\n.SS \"simstore {name}\"\n")),
            "no {name}"
        );
    }
    assert!(
        page.contains("\\fB\\-\\-format\\fR \\fIFORMAT\\fR"),
        "{page}"
    );
    assert!(page.contains("Values: auto, jsonl, text, html, warc."));
    for line in page
        .lines()
        .filter(|l| l.starts_with('.') || l.starts_with('\''))
    {
        let request = line[1..].split_whitespace().next().unwrap_or("");
        assert!(REQUESTS.contains(&request), "unexpected request: {line}");
    }
    // Rendered by man(1) where it is installed: no warning, and the text reads.
    if Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let file = t.write("simstore.1", page.as_bytes());
        let o = Command::new("man")
            .args(["--warnings", "-P", "cat", "-l"])
            .arg(&file)
            .env("LANG", "C")
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        let (text, warnings) = (String::from_utf8_lossy(&o.stdout), stderr(&o));
        assert!(o.status.success() && warnings.is_empty(), "{warnings}");
        assert!(
            text.contains("simstore import") && text.contains("--format FORMAT"),
            "{text}"
        );
    } else {
        // CI installs man-db (.ci/run); elsewhere the roff checks above still ran.
        eprintln!("man(1) is not installed: the page was checked but not rendered");
    }
}

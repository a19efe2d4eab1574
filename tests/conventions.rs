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
/// `t`'s directory: the script's function as bash calls it (the command, the word under the
/// cursor, the one before), then, when it offers nothing, file names — what the
/// `-o default` the script registers it with makes bash do.
fn bash_complete(t: &TestCommand, script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let o = Command::new("bash")
        .arg("-c")
        .arg(
            "source \"$1\"; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); \
             _simstore \"$1\" \"${COMP_WORDS[COMP_CWORD]}\" \"${COMP_WORDS[COMP_CWORD-1]}\"; \
             if [ ${#COMPREPLY[@]} -eq 0 ]; then COMPREPLY=($(compgen -f -- \"${COMP_WORDS[COMP_CWORD]}\")); fi; \
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
    let top: Vec<String> = complete(&["simstore", ""])
        .into_iter()
        .filter(|w| !w.starts_with('-'))
        .collect();
    assert_eq!(top, all);
    assert!(complete(&["simstore", "--"]).contains(&"--db".to_owned()));
    assert_eq!(complete(&["simstore", "imp"]), ["import"]);
    assert_eq!(complete(&["simstore", "import", "--fo"]), ["--format"]);
    let formats = ["auto", "html", "jsonl", "parquet", "text", "warc"];
    assert_eq!(complete(&["simstore", "import", "--format", ""]), formats);
    // The global --db and its value come before the subcommand.
    let words = ["simstore", "--db", "x.db", "export", "--format", ""];
    assert_eq!(complete(&words), ["csv", "jsonl", "parquet"]);
    let shells: Vec<String> = complete(&["simstore", "completions", ""])
        .into_iter()
        .filter(|w| !w.starts_with('-'))
        .collect();
    assert_eq!(shells, ["bash", "fish", "zsh"]);
    // A number has nothing to offer; an input, a store or an output is a file.
    t.write("pages.jsonl", b"");
    assert!(complete(&["simstore", "query", "--k", ""]).is_empty());
    assert_eq!(complete(&["simstore", "import", "pag"]), ["pages.jsonl"]);
    assert_eq!(complete(&["simstore", "--db", "pag"]), ["pages.jsonl"]);
    assert_eq!(
        complete(&["simstore", "export", "-o", "pag"]),
        ["pages.jsonl"]
    );
    assert!(complete(&["simstore", "serve", "--"]).contains(&"--port".to_owned()));
}

#[test]
fn zsh_and_fish_scripts_cover_every_subcommand_and_value() {
    let t = TestCommand::new();
    let zsh = completions(&t, "zsh");
    let fish = completions(&t, "fish");
    assert!(zsh.starts_with("#compdef simstore\n"), "{zsh}");
    for name in subcommands(&t) {
        assert!(zsh.contains(&format!("\n'{name}:")), "zsh lacks {name}");
        assert!(zsh.contains(&format!("({name})\n")), "zsh lacks {name}");
        let line =
            format!("complete -c simstore -n \"__fish_simstore_needs_command\" -f -a \"{name}\"");
        assert!(fish.contains(&line), "fish lacks {name}");
    }
    assert!(
        zsh.contains("'--format=[") && zsh.contains(":(auto jsonl text html warc parquet)'"),
        "{zsh}"
    );
    assert!(
        fish.contains("-l format -d") && fish.contains("-r -f -a \"auto\\t''"),
        "{fish}"
    );
    // Shells that are installed read their script without a syntax error.
    for (shell, script, check) in [("zsh", &zsh, "-n"), ("fish", &fish, "--no-execute")] {
        if Command::new(shell)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            let file = t.write(&format!("simstore.{shell}"), script.as_bytes());
            let o = Command::new(shell).arg(check).arg(&file).output().unwrap();
            assert!(o.status.success(), "{shell}: {}", stderr(&o));
        }
    }
}

/// The file the command reference is generated into.
const CLI_REFERENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli-reference.md");

/// `simstore ARGS --help` in an empty environment (no `SIMSTORE_*` value shown as set).
fn help_of(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_simstore"))
        .args(args)
        .arg("--help")
        .env_clear()
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// docs/cli-reference.md is the binary's own `--help`, of the command and of every
/// subcommand, so it cannot drift from the code: `SIMSTORE_BLESS=1` writes it anew.
#[test]
fn the_cli_reference_is_the_binarys_own_help() {
    let t = TestCommand::new();
    let mut page = String::from(
        "# Command reference\n\nThe `--help` of `simstore` and of each subcommand, generated from the binary \
         (`SIMSTORE_BLESS=1 cargo test --release --test tests the_cli_reference` rewrites this \
         file; the test fails when it is not current). How the commands behave: [cli.md](cli.md).\n",
    );
    let section =
        |title: &str, help: &str| format!("\n## {title}\n\n```text\n{}\n```\n", help.trim_end());
    page += &section("simstore", &help_of(&[]));
    for name in subcommands(&t) {
        page += &section(&format!("simstore {name}"), &help_of(&[&name]));
    }
    if std::env::var_os("SIMSTORE_BLESS").is_some() {
        std::fs::write(CLI_REFERENCE, &page).unwrap();
    }
    let current = std::fs::read_to_string(CLI_REFERENCE).unwrap_or_default();
    assert!(
        current == page,
        "docs/cli-reference.md is not the binary's --help: regenerate it with \
         SIMSTORE_BLESS=1 cargo test --release --test tests the_cli_reference"
    );
}

/// `simstore man ARGS`, checked to succeed.
fn man_page(t: &TestCommand, args: &[&str]) -> String {
    let o = t.run(&[&["man"], args].concat());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// `page` rendered by man(1) without a warning, where man is installed (CI installs
/// man-db: .ci/run); `None` elsewhere.
fn rendered(t: &TestCommand, name: &str, page: &str) -> Option<String> {
    let installed = Command::new("man").arg("--version").output();
    if !installed.is_ok_and(|o| o.status.success()) {
        eprintln!("man(1) is not installed: the pages were checked but not rendered");
        return None;
    }
    let file = t.write(name, page.as_bytes());
    let o = Command::new("man")
        .args(["--warnings", "-P", "cat", "-l"])
        .arg(&file)
        .env("LANG", "C")
        .env("MANWIDTH", "100")
        .output()
        .unwrap();
    let warnings = stderr(&o);
    assert!(
        o.status.success() && warnings.is_empty(),
        "{name}: {warnings}"
    );
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn the_man_pages_document_every_subcommand() {
    let t = TestCommand::new();
    let page = man_page(&t, &[]);
    assert_eq!(page.matches("\n.TH ").count(), 1, "one title: {page}");
    assert!(page.contains("\n.TH simstore 1 "), "{page}");
    for section in [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "OPTIONS",
        "SUBCOMMANDS",
        "ENVIRONMENT",
        "EXAMPLES",
    ] {
        assert!(page.contains(&format!("\n.SH {section}\n")), "no {section}");
    }
    assert!(page.contains("\n.SH \"EXIT STATUS\"\n"), "{page}");
    let names = subcommands(&t);
    for name in &names {
        assert!(page.contains(&format!("simstore\\-{name}(1)")), "no {name}");
        let sub = man_page(&t, &[name]);
        assert!(sub.contains(&format!("\n.TH simstore-{name} 1 ")), "{sub}");
    }
    let import = man_page(&t, &["import"]);
    assert!(import.contains("\\fB\\-\\-format\\fR"), "{import}");
    assert!(
        import.contains("auto") && import.contains("warc"),
        "{import}"
    );
    let o = t.run(&["man", "nonesuch"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("no command \"nonesuch\""),
        "{}",
        stderr(&o)
    );
    // --dir writes every page, by the rule of every output file: a link stays a link.
    let dir = t.path("man1");
    std::fs::create_dir(&dir).unwrap();
    let kept = t.write("kept.1", b"old");
    std::os::unix::fs::symlink(&kept, dir.join("simstore.1")).unwrap();
    let o = t.run(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(dir.join("simstore.1").is_symlink());
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), page);
    for name in &names {
        assert!(
            dir.join(format!("simstore-{name}.1")).is_file(),
            "no page of {name}"
        );
    }
    if let Some(text) = rendered(&t, "simstore.1", &page) {
        assert!(
            text.contains("simstore-import(1)") && text.contains("SIMSTORE_DB"),
            "{text}"
        );
        let text = rendered(&t, "simstore-import.1", &import).unwrap();
        assert!(text.contains("--format"), "{text}");
    }
}

/// A command whose stderr is a closed pipe (`simstore dedup ... 2>&1 | head -1`) does its
/// work and exits with its own status: its notes are dropped, it does not panic halfway.
#[test]
fn a_closed_stderr_stops_no_command() {
    let t = TestCommand::new();
    let mut input: String = (0..40)
        .map(|i| format!("{{\"id\":{i},\"text\":\"alpha{i} beta{i} gamma{i} delta{i} eps{i}\"}}\n"))
        .collect();
    input.push_str("not json\n");
    t.write("in.jsonl", input.as_bytes());
    let mut child = t
        .command(&["dedup", "in.jsonl", "--output", "kept.jsonl"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(1),
        "the line that is not JSON, not a panic (101)"
    );
    let kept = std::fs::read_to_string(t.path("kept.jsonl")).unwrap();
    assert_eq!(kept.lines().count(), 40);
}

//! `simstore man`: the manual page (roff, section 1) generated from the argument parser's
//! definition: every subcommand with its options, their values and defaults, then the exit
//! status, the environment and the examples of `--help`.

use std::io::{self, Write};

use anyhow::Result;
use clap::CommandFactory;

use super::Code;
use super::complete::{Flag, Node};

/// Arguments of `simstore man`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Read it with `simstore man | man -l -`; install it with\n  \
                        simstore man > ~/.local/share/man/man1/simstore.1"
)]
pub struct Args {}

/// Writes the manual page to stdout.
pub fn run(_args: Args) -> Result<Code> {
    let cmd = super::Cli::command();
    let page = page(&Node::of(&cmd), &cmd.render_version());
    io::stdout().lock().write_all(page.as_bytes())?;
    Ok(0)
}

/// Text made safe for roff: backslashes escaped, a line never starting with a control
/// character (`.` or `'`).
fn roff(text: &str) -> String {
    let text = text.replace('\\', "\\e");
    let lines = text.lines().map(|l| {
        if l.starts_with('.') || l.starts_with('\'') {
            format!("\\&{l}")
        } else {
            l.to_owned()
        }
    });
    lines.collect::<Vec<_>>().join("\n")
}

/// A flag's name in bold (`\-\-format`) and its value in italics.
fn flag_term(f: &Flag) -> String {
    let names: Vec<String> = f
        .spellings()
        .iter()
        .map(|w| format!("\\fB{}\\fR", w.replace('-', "\\-")))
        .collect();
    let value = f
        .value
        .as_ref()
        .map_or(String::new(), |v| format!(" \\fI{}\\fR", roff(v)));
    format!("{}{value}", names.join(", "))
}

/// The `.TP` paragraphs of `node`'s positionals and flags.
/// Global options (`--db`) only at the top (`top`), not under every subcommand.
fn arguments(out: &mut String, node: &Node, top: bool) {
    for p in &node.positionals {
        let dots = if p.many { "..." } else { "" };
        *out += &format!(".TP\n\\fI{}\\fR{dots}\n{}\n", roff(&p.name), roff(&p.help));
        if !p.values.is_empty() {
            *out += &format!(".br\nValues: {}.\n", roff(&p.values.join(", ")));
        }
    }
    for f in node.flags.iter().filter(|f| top || !f.global) {
        *out += &format!(".TP\n{}\n{}\n", flag_term(f), roff(&f.help));
        if !f.values.is_empty() {
            *out += &format!(".br\nValues: {}.\n", roff(&f.values.join(", ")));
        }
        if let Some(d) = &f.default {
            *out += &format!(".br\nDefault: {}.\n", roff(d));
        }
    }
}

/// The synopsis of a subcommand: `simstore NAME [OPTIONS] ARG...`.
fn synopsis(node: &Node) -> String {
    let mut s = format!("\\fBsimstore {}\\fR [\\fIOPTIONS\\fR]", roff(&node.name));
    for p in &node.positionals {
        s += &format!(
            " \\fI{}\\fR{}",
            roff(&p.name),
            if p.many { "..." } else { "" }
        );
    }
    s
}

/// `text` without its heading line (`Examples:`) and the blank lines around it.
fn body(text: &str) -> &str {
    let text = text.trim_start_matches('\n');
    text.split_once('\n').map_or("", |(_, rest)| rest)
}

const EXIT_STATUS: &str = "0 success (for query: some match); 1 nothing found, or some \
    records failed (import), or problems found (check); 2 error. A closed pipe (| head) is \
    not an error.";

/// The whole page; `version` is `simstore X.Y.Z`.
fn page(root: &Node, version: &str) -> String {
    let mut s = format!(
        ".TH SIMSTORE 1 \"\" \"{}\" \"User Commands\"\n.nh\n.SH NAME\nsimstore \\- {}\n",
        roff(version.trim()),
        roff(root.about.strip_prefix("simstore: ").unwrap_or(&root.about))
    );
    s += ".SH SYNOPSIS\n\\fBsimstore\\fR [\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]\n";
    let about = root.long_about.as_deref().unwrap_or(&root.about);
    s += &format!(".SH DESCRIPTION\n{}\n.SH OPTIONS\n", roff(about));
    arguments(&mut s, root, true);
    s += ".SH COMMANDS\n";
    for sub in root.subcommands.iter().filter(|c| c.name != "help") {
        s += &format!(
            ".SS \"simstore {}\"\n{}\n.PP\n",
            roff(&sub.name),
            synopsis(sub)
        );
        let about = sub.long_about.as_deref().unwrap_or(&sub.about);
        s += &format!("{}\n", roff(about));
        arguments(&mut s, sub, false);
    }
    s += &format!(".SH \"EXIT STATUS\"\n{EXIT_STATUS}\n");
    s += &format!(
        ".SH ENVIRONMENT\n.nf\n{}\n.fi\n",
        roff(body(super::ENVIRONMENT))
    );
    s += &format!(
        ".SH EXAMPLES\n.nf\n{}\n.fi\n",
        roff(body(&super::examples()))
    );
    s
}

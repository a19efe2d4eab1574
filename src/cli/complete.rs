//! `simstore completions bash|zsh|fish`: a completion script generated from the argument
//! parser's definition (subcommands, their long and short flags, the values of value
//! enums; files for positional arguments and for options taking a free value). The same
//! tree ([`Node`]) feeds `simstore man`.

use std::io::{self, Write};

use anyhow::Result;
use clap::CommandFactory;

use super::Code;

/// Arguments of `simstore completions`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Install (the script reads the binary's own definition, so regenerate \
                        it after an upgrade):\n  \
                        bash: simstore completions bash > ~/.local/share/bash-completion/completions/simstore\n  \
                        zsh:  simstore completions zsh > ~/.zfunc/_simstore   (with fpath+=~/.zfunc before compinit)\n  \
                        fish: simstore completions fish > ~/.config/fish/completions/simstore.fish"
)]
pub struct Args {
    /// The shell to write a completion script for.
    #[arg(value_enum)]
    shell: Shell,
}

/// The shells completions are written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// Writes the completion script for `args.shell` to stdout.
pub fn run(args: Args) -> Result<Code> {
    let root = Node::of(&super::Cli::command());
    let script = match args.shell {
        Shell::Bash => bash(&root),
        Shell::Zsh => zsh(&root),
        Shell::Fish => fish(&root),
    };
    io::stdout().lock().write_all(script.as_bytes())?;
    Ok(0)
}

/// A (sub)command, as the generators see it.
pub(super) struct Node {
    pub(super) name: String,
    /// The one-line description.
    pub(super) about: String,
    /// The long description (`--help`), if longer.
    pub(super) long_about: Option<String>,
    /// Options and flags (globals included), `--help`/`--version` too.
    pub(super) flags: Vec<Flag>,
    /// Positional arguments.
    pub(super) positionals: Vec<Positional>,
    pub(super) subcommands: Vec<Node>,
}

/// A positional argument.
pub(super) struct Positional {
    /// Its value name (`FILES`).
    pub(super) name: String,
    pub(super) help: String,
    /// Whether it may be given more than once.
    pub(super) many: bool,
    /// The values it accepts, when they are a fixed list.
    pub(super) values: Vec<String>,
    /// Whether it names files (completed as such).
    pub(super) path: bool,
}

/// An option or flag.
pub(super) struct Flag {
    pub(super) long: Option<String>,
    pub(super) short: Option<char>,
    /// Its help, all of it (the generators take the first line or all).
    pub(super) help: String,
    /// The value's name (`PATH`) when it takes a value.
    pub(super) value: Option<String>,
    /// The values it accepts, when they are a fixed list (a value enum).
    pub(super) values: Vec<String>,
    /// Its default value, if any.
    pub(super) default: Option<String>,
    /// Whether its value names a file or directory (completed as such).
    pub(super) path: bool,
    /// A global option (`--db`): every subcommand takes it.
    pub(super) global: bool,
}

impl Node {
    /// The tree of `cmd` (built first, so global flags reach every subcommand).
    pub(super) fn of(cmd: &clap::Command) -> Node {
        let mut cmd = cmd.clone();
        cmd.build();
        Self::walk(&cmd)
    }

    fn walk(cmd: &clap::Command) -> Node {
        let text = |s: Option<&clap::builder::StyledStr>| s.map(|s| s.to_string());
        let args = cmd.get_arguments().filter(|a| !a.is_hide_set());
        let (positionals, flags): (Vec<_>, Vec<_>) = args.partition(|a| a.is_positional());
        Node {
            name: cmd.get_name().to_owned(),
            about: text(cmd.get_about()).unwrap_or_default(),
            long_about: text(cmd.get_long_about()),
            flags: flags.into_iter().map(Flag::of).collect(),
            positionals: positionals.into_iter().map(positional).collect(),
            subcommands: (cmd.get_subcommands())
                .filter(|c| !c.is_hide_set())
                .map(Self::walk)
                .collect(),
        }
    }
}

/// The value name of `a` (`FILE`), else its id in capitals.
fn value_name(a: &clap::Arg) -> String {
    a.get_value_names()
        .and_then(|v| v.first())
        .map_or_else(|| a.get_id().to_string().to_uppercase(), |v| v.to_string())
}

/// Whether `a`'s value names a file or directory: a `PathBuf`, or named so.
fn names_a_path(a: &clap::Arg) -> bool {
    use clap::ValueHint::{AnyPath, DirPath, FilePath};
    const PATH_NAMES: [&str; 8] = [
        "DB", "DEST", "DIR", "FILE", "FILES", "INPUT", "INPUTS", "PATH",
    ];
    matches!(a.get_value_hint(), AnyPath | DirPath | FilePath)
        || PATH_NAMES.contains(&value_name(a).as_str())
}

/// The values `a` accepts, when they are a fixed list (a value enum).
fn fixed_values(a: &clap::Arg) -> Vec<String> {
    if !a.get_action().takes_values() {
        return Vec::new();
    }
    let values = a
        .get_possible_values()
        .into_iter()
        .filter(|v| !v.is_hide_set());
    values.map(|v| v.get_name().to_owned()).collect()
}

fn positional(a: &clap::Arg) -> Positional {
    let many = matches!(a.get_action(), clap::ArgAction::Append)
        || a.get_num_args().is_some_and(|n| n.max_values() > 1);
    Positional {
        name: value_name(a),
        help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
        many,
        values: fixed_values(a),
        path: names_a_path(a),
    }
}

impl Flag {
    fn of(a: &clap::Arg) -> Flag {
        let takes_value = a.get_action().takes_values();
        let help = a.get_long_help().or(a.get_help());
        let default = a.get_default_values().first();
        Flag {
            long: a.get_long().map(str::to_owned),
            short: a.get_short(),
            help: help.map(|h| h.to_string()).unwrap_or_default(),
            value: takes_value.then(|| value_name(a)),
            values: fixed_values(a),
            default: default
                .filter(|_| takes_value)
                .map(|d| d.to_string_lossy().into_owned()),
            path: takes_value && names_a_path(a),
            global: a.is_global_set(),
        }
    }

    /// `--long` and `-s`, as typed.
    pub(super) fn spellings(&self) -> Vec<String> {
        let long = self.long.iter().map(|l| format!("--{l}"));
        long.chain(self.short.map(|s| format!("-{s}"))).collect()
    }

    /// The first line of its help, without the final period.
    fn summary(&self) -> &str {
        first_line(&self.help)
    }
}

/// The first line of `text`, without a final period.
fn first_line(text: &str) -> &str {
    let line = text.lines().next().unwrap_or("");
    line.strip_suffix('.').unwrap_or(line)
}

/// Every flag spelling of `node`, space-separated.
fn flag_words(node: &Node) -> String {
    let words: Vec<String> = node.flags.iter().flat_map(Flag::spellings).collect();
    words.join(" ")
}

/// The bash script: a function `_simstore` for `complete -F`.
fn bash(root: &Node) -> String {
    let mut s = String::from(
        "# bash completion for simstore (generated by `simstore completions bash`)\n\
         _simstore() {\n    \
         local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n    \
         local cmd=\"\" i flags files=\"\" words=\"\"\n    \
         # The subcommand: the first word that is neither an option nor an option's value.\n    \
         for ((i = 1; i < COMP_CWORD; i++)); do\n        case \"${COMP_WORDS[i]}\" in\n",
    );
    let valued: Vec<String> = (root.flags.iter().filter(|f| f.value.is_some()))
        .flat_map(Flag::spellings)
        .collect();
    if !valued.is_empty() {
        s += &format!("            {}) ((i++)) ;;\n", valued.join("|"));
    }
    s += "            -*) ;;\n            *) cmd=\"${COMP_WORDS[i]}\"; break ;;\n        esac\n    done\n";
    s += "    # The value of the option before the cursor.\n    case \"$cmd:$prev\" in\n";
    for node in std::iter::once(root).chain(&root.subcommands) {
        let cmd = if std::ptr::eq(node, root) {
            ""
        } else {
            &node.name
        };
        for f in node.flags.iter().filter(|f| f.value.is_some()) {
            let pattern: Vec<String> = f.spellings().iter().map(|w| format!("{cmd}:{w}")).collect();
            let reply = if !f.values.is_empty() {
                format!("compgen -W \"{}\" -- \"$cur\"", f.values.join(" "))
            } else if f.path {
                "compgen -f -- \"$cur\"".to_owned()
            } else {
                // A number or a text: nothing to offer.
                "true".to_owned()
            };
            s += &format!(
                "        {}) COMPREPLY=($({reply})); return ;;\n",
                pattern.join("|")
            );
        }
    }
    s += "    esac\n    case \"$cmd\" in\n";
    s += &format!("        \"\") flags=\"{}\" ;;\n", flag_words(root));
    for sub in &root.subcommands {
        let files = if sub.positionals.iter().any(|p| p.path) {
            " files=1;"
        } else {
            ""
        };
        let values: Vec<&str> = (sub.positionals.iter())
            .flat_map(|p| p.values.iter().map(String::as_str))
            .collect();
        let words = format!(" words=\"{}\";", values.join(" "));
        let flags = flag_words(sub);
        s += &format!(
            "        {}) flags=\"{flags}\";{files}{words} ;;\n",
            sub.name
        );
    }
    let names: Vec<&str> = root.subcommands.iter().map(|c| c.name.as_str()).collect();
    s += &format!(
        "    esac\n    \
         if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n    \
         elif [[ -z \"$cmd\" ]]; then COMPREPLY=($(compgen -W \"{}\" -- \"$cur\"))\n    \
         elif [[ -n \"$words\" ]]; then COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n    \
         elif [[ -n \"$files\" ]]; then COMPREPLY=($(compgen -f -- \"$cur\"))\n    \
         fi\n}}\ncomplete -o filenames -F _simstore simstore\n",
        names.join(" ")
    );
    s
}

/// `text` inside zsh single quotes, and inside an `_arguments` description (`[...]`).
fn zsh_quote(text: &str) -> String {
    text.replace('\'', "'\\''")
        .replace('[', "\\[")
        .replace(']', "\\]")
        .replace(':', "\\:")
}

/// The `_arguments` specs of `node`'s flags and positionals, one quoted spec per line.
fn zsh_specs(node: &Node) -> Vec<String> {
    let mut specs = Vec::new();
    for f in &node.flags {
        let help = zsh_quote(f.summary());
        let value = f.value.as_ref().map_or(String::new(), |v| {
            let action = if !f.values.is_empty() {
                format!("({})", f.values.join(" "))
            } else if f.path {
                "_files".to_owned()
            } else {
                " ".to_owned()
            };
            format!(":{}:{action}", zsh_quote(v))
        });
        for w in f.spellings() {
            specs.push(format!("'{w}[{help}]{value}'"));
        }
    }
    for p in &node.positionals {
        let action = if !p.values.is_empty() {
            format!("({})", p.values.join(" "))
        } else if p.path {
            "_files".to_owned()
        } else {
            " ".to_owned()
        };
        let position = if p.many { "*" } else { "" };
        specs.push(format!(
            "'{position}:{}:{action}'",
            zsh_quote(&p.name.to_lowercase())
        ));
    }
    specs
}

/// The zsh script (`#compdef simstore`), for a directory in `$fpath`.
fn zsh(root: &Node) -> String {
    let mut s = String::from(
        "#compdef simstore\n# zsh completion for simstore (generated by `simstore completions zsh`)\n\n\
         _simstore_commands() {\n    local -a commands\n    commands=(\n",
    );
    for sub in &root.subcommands {
        let about = first_line(&sub.about).replace('\'', "'\\''");
        s += &format!("        '{}:{about}'\n", sub.name);
    }
    s += "    )\n    _describe -t commands 'simstore command' commands\n}\n\n";
    s += "_simstore() {\n    local curcontext=\"$curcontext\" state line\n    _arguments -C \\\n";
    for spec in zsh_specs(root) {
        s += &format!("        {spec} \\\n");
    }
    s += "        '1: :_simstore_commands' \\\n        '*:: :->args'\n";
    s += "    case $state in\n        args)\n            case $words[1] in\n";
    for sub in &root.subcommands {
        let specs = zsh_specs(sub).join(" \\\n                        ");
        let specs = if specs.is_empty() {
            "''".to_owned()
        } else {
            specs
        };
        s += &format!(
            "                {})\n                    _arguments \\\n                        {specs} ;;\n",
            sub.name
        );
    }
    s += "            esac ;;\n    esac\n}\n\n_simstore \"$@\"\n";
    s
}

/// `text` inside fish single quotes.
fn fish_quote(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The fish script, for `~/.config/fish/completions/simstore.fish`.
fn fish(root: &Node) -> String {
    let mut s = String::from(
        "# fish completion for simstore (generated by `simstore completions fish`)\n\
         complete -c simstore -f\n",
    );
    for f in &root.flags {
        s += &fish_flag("__fish_use_subcommand", f);
    }
    for sub in &root.subcommands {
        let about = fish_quote(first_line(&sub.about));
        s += &format!(
            "complete -c simstore -n __fish_use_subcommand -a {} -d {about}\n",
            sub.name
        );
    }
    for sub in &root.subcommands {
        let when = format!("'__fish_seen_subcommand_from {}'", sub.name);
        for f in &sub.flags {
            s += &fish_flag(&when, f);
        }
        for p in &sub.positionals {
            if !p.values.is_empty() {
                let values = fish_quote(&p.values.join(" "));
                s += &format!("complete -c simstore -n {when} -a {values}\n");
            } else if p.path {
                s += &format!("complete -c simstore -n {when} -F\n");
            }
        }
    }
    s
}

/// One `complete` line for a flag, under condition `when`.
fn fish_flag(when: &str, f: &Flag) -> String {
    let mut line = format!("complete -c simstore -n {when}");
    if let Some(l) = &f.long {
        line += &format!(" -l {l}");
    }
    if let Some(c) = f.short {
        line += &format!(" -s {c}");
    }
    if f.value.is_some() {
        // -F: files may be offered; -f: only the listed values, if any.
        line += if f.path { " -r -F" } else { " -r -f" };
    }
    if !f.values.is_empty() {
        line += &format!(" -a {}", fish_quote(&f.values.join(" ")));
    }
    format!("{line} -d {}\n", fish_quote(f.summary()))
}

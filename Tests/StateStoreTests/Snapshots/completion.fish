function __statectl_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __statectl_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __statectl_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __statectl_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __statectl_parse_tokens -S
    set -l unparsed_tokens (__statectl_tokens -pc)
    switch $unparsed_tokens[1]
    case 'statectl'
        __statectl_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'migrate'
            __statectl_parse_subcommand 0 'db=' 'json' 'dry-run' 'repair' 'version' 'h/help'
        case 'recover'
            __statectl_parse_subcommand 0 'db=' 'max-state-size=' 'json' 'version' 'h/help'
        case 'check'
            __statectl_parse_subcommand 0 'db=' 'json' 'key-file=' 'credential=' 'version' 'h/help'
        case 'inspect'
            __statectl_parse_subcommand 1 'db=' 'json' 'key-file=' 'credential=' 'list' 'events' 'limit=' 'quarantine' 'hierarchy' 'scene=' 'set-aside' 'scenes' 'version' 'h/help'
        case 'export'
            __statectl_parse_subcommand 0 'db=' 'o/output=' 'max-state-size=' 'key-file=' 'credential=' 'clear' 'version' 'h/help'
        case 'import'
            __statectl_parse_subcommand 1 'db=' 'json' 'replace' 'max-state-size=' 'key-file=' 'credential=' 'version' 'h/help'
        case 'prune'
            __statectl_parse_subcommand 0 'db=' 'json' 'older-than=' 'path=' 'invalid-paths' 'quarantine' 'dry-run' 'version' 'h/help'
        case 'rekey'
            __statectl_parse_subcommand 0 'db=' 'json' 'key-file=' 'credential=' 'new-key-file=' 'new-credential=' 'clear' 'max-state-size=' 'version' 'h/help'
        case 'monitor'
            __statectl_parse_subcommand 0 'once' 'interval=' 'count=' 'root=' 'cgroup=' 'events' 'json' 'version' 'h/help'
        case 'demo'
            __statectl_parse_subcommand 0 'db=' 'json' 'key-file=' 'credential=' 'version' 'h/help'
        case 'soak'
            __statectl_parse_subcommand 0 'duration=' 'controllers=' 'db=' 'pressure=' 'memory-limit=' 'ballast=' 'seed=' 'report=' 'json' 'quiet' 'version' 'h/help'
        case 'help'
            __statectl_parse_subcommand -r 1 'version'
        end
    end
end

function __statectl_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __statectl_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __statectl_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __statectl_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__statectl_tokens -p)
    if test -z "$(__statectl_tokens -t)"
        set -l index (count (__statectl_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'statectl' -f
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl" version' -l 'version' -d 'Show the version.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_positional "statectl" -eq 1' -fa 'migrate' -d 'Create the database if needed and apply pending schema migrations.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_positional "statectl" -eq 1' -fa 'recover' -d 'Move a damaged database aside and start a fresh one holding every state that can still be read.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_positional "statectl" -eq 1' -fa 'check' -d 'Check the database\'s integrity, schema version, checksums and quarantine.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_positional "statectl" -eq 1' -fa 'inspect' -d 'Show the stored states, one state, pressure events, quarantine or the hierarchy.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_positional "statectl" -eq 1' -fa 'export' -d 'Write every stored state as one JSON document.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_positional "statectl" -eq 1' -fa 'import' -d 'Import the states of an export document, all in one transaction.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_positional "statectl" -eq 1' -fa 'prune' -d 'Remove states not updated for a while, or the states at and below a path.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_positional "statectl" -eq 1' -fa 'rekey' -d 'Seal every state with a new key, or make every state clear, in one transaction.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_positional "statectl" -eq 1' -fa 'monitor' -d 'Print memory samples: host and cgroup memory, PSI, effective available and level.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_positional "statectl" -eq 1' -fa 'demo' -d 'Run a small mail app twice on a database and show what it saved and restored.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_positional "statectl" -eq 1' -fa 'soak' -d 'Run controllers under real memory pressure and check that nothing is lost.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_positional "statectl" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl migrate" db' -l 'db' -d 'The state database file. Default: $STATESTORE_DB, else the "statestore-demo" app\'s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl migrate" json' -l 'json' -d 'Print a JSON document (stable schema, see `statectl --help`) instead of text.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl migrate" dry-run' -l 'dry-run' -d 'List the pending migrations without applying them.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl migrate" repair' -l 'repair' -d 'Re-record the schema version of a database whose tables match this build\'s schema exactly but whose version records were erased.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl migrate" version' -l 'version' -d 'Show the version.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl migrate" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl recover" db' -l 'db' -d 'The state database file. Default: $STATESTORE_DB, else the "statestore-demo" app\'s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl recover" max-state-size' -l 'max-state-size' -d 'The largest state accepted, as the application\'s StateStore.Options.maximumStateSize (default 1MiB).' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl recover" json' -l 'json' -d 'Print a JSON document (stable schema, see `statectl --help`) instead of text.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl recover" version' -l 'version' -d 'Show the version.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl recover" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl check" db' -l 'db' -d 'The state database file. Default: $STATESTORE_DB, else the "statestore-demo" app\'s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl check" json' -l 'json' -d 'Print a JSON document (stable schema, see `statectl --help`) instead of text.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl check" key-file' -l 'key-file' -d 'Open sealed states with the key in this file (mode 600 or 400, owned by you).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl check" credential' -l 'credential' -d 'Open sealed states with the systemd credential NAME ($CREDENTIALS_DIRECTORY/NAME).' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl check" version' -l 'version' -d 'Show the version.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl check" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl inspect" db' -l 'db' -d 'The state database file. Default: $STATESTORE_DB, else the "statestore-demo" app\'s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl inspect" json' -l 'json' -d 'Print a JSON document (stable schema, see `statectl --help`) instead of text.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl inspect" key-file' -l 'key-file' -d 'Open sealed states with the key in this file (mode 600 or 400, owned by you).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl inspect" credential' -l 'credential' -d 'Open sealed states with the systemd credential NAME ($CREDENTIALS_DIRECTORY/NAME).' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl inspect" list' -l 'list' -d 'Always list the states at and below PATH as a table, even when a state is stored at PATH.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl inspect" events' -l 'events' -d 'Show the memory-pressure events the application handled, newest first.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl inspect" limit' -l 'limit' -d 'How many pressure events --events shows.' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl inspect" quarantine' -l 'quarantine' -d 'Show the quarantined states and why they were quarantined, newest first.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl inspect" hierarchy' -l 'hierarchy' -d 'Show the saved window hierarchy archive.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl inspect" scene' -l 'scene' -d 'The window scene whose hierarchy --hierarchy shows.' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl inspect" set-aside' -l 'set-aside' -d 'With --hierarchy: the archive the crash-loop guard set aside instead of the live one.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl inspect" scenes' -l 'scenes' -d 'Show the window scenes and which live process holds each.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl inspect" version' -l 'version' -d 'Show the version.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl inspect" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl export" db' -l 'db' -d 'The state database file. Default: $STATESTORE_DB, else the "statestore-demo" app\'s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl export" o output' -l 'output' -s 'o' -d 'Write the document to this file instead of stdout.' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl export" max-state-size' -l 'max-state-size' -d 'The largest state accepted, as the application\'s StateStore.Options.maximumStateSize (default 1MiB).' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl export" key-file' -l 'key-file' -d 'Open sealed states with the key in this file (mode 600 or 400, owned by you).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl export" credential' -l 'credential' -d 'Open sealed states with the systemd credential NAME ($CREDENTIALS_DIRECTORY/NAME).' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl export" clear' -l 'clear' -d 'Write sealed states clear, opened with the key given (--key-file or --credential).'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl export" version' -l 'version' -d 'Show the version.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl export" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl import" db' -l 'db' -d 'The state database file. Default: $STATESTORE_DB, else the "statestore-demo" app\'s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl import" json' -l 'json' -d 'Print a JSON document (stable schema, see `statectl --help`) instead of text.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_positional "statectl import" -eq 1' -F
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl import" replace' -l 'replace' -d 'Also remove stored states whose paths are not in the document.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl import" max-state-size' -l 'max-state-size' -d 'The largest state accepted, as the application\'s StateStore.Options.maximumStateSize (default 1MiB).' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl import" key-file' -l 'key-file' -d 'Open sealed states with the key in this file (mode 600 or 400, owned by you).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl import" credential' -l 'credential' -d 'Open sealed states with the systemd credential NAME ($CREDENTIALS_DIRECTORY/NAME).' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl import" version' -l 'version' -d 'Show the version.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl import" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl prune" db' -l 'db' -d 'The state database file. Default: $STATESTORE_DB, else the "statestore-demo" app\'s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl prune" json' -l 'json' -d 'Print a JSON document (stable schema, see `statectl --help`) instead of text.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl prune" older-than' -l 'older-than' -d 'Remove states last updated longer ago than this (30d, 12h, 90m, 45s).' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl prune" path' -l 'path' -d 'Remove the state at this path and every state below it.' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl prune" invalid-paths' -l 'invalid-paths' -d 'Remove the rows whose path is not a valid restoration path (as `statectl inspect` lists them).'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl prune" quarantine' -l 'quarantine' -d 'Remove quarantined rows (by --older-than, when they were quarantined, or --path) instead of states.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl prune" dry-run' -l 'dry-run' -d 'Print what would be removed without removing it.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl prune" version' -l 'version' -d 'Show the version.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl prune" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl rekey" db' -l 'db' -d 'The state database file. Default: $STATESTORE_DB, else the "statestore-demo" app\'s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl rekey" json' -l 'json' -d 'Print a JSON document (stable schema, see `statectl --help`) instead of text.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl rekey" key-file' -l 'key-file' -d 'Open sealed states with the key in this file (mode 600 or 400, owned by you).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl rekey" credential' -l 'credential' -d 'Open sealed states with the systemd credential NAME ($CREDENTIALS_DIRECTORY/NAME).' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl rekey" new-key-file' -l 'new-key-file' -d 'Seal every state with the key in this file (mode 600 or 400, owned by you).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl rekey" new-credential' -l 'new-credential' -d 'Seal every state with the systemd credential NAME.' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl rekey" clear' -l 'clear' -d 'Make every state clear: unseal the database.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl rekey" max-state-size' -l 'max-state-size' -d 'The largest state accepted, as the application\'s StateStore.Options.maximumStateSize (default 1MiB).' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl rekey" version' -l 'version' -d 'Show the version.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl rekey" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl monitor" once' -l 'once' -d 'Print one sample and exit.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl monitor" interval' -l 'interval' -d 'Time between samples: 1s, 500ms, 2m. (default: 1s)' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl monitor" count' -l 'count' -d 'Stop after this many samples.' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl monitor" root' -l 'root' -d 'A directory standing in for / (a fixture tree).' -rfa '(__statectl_complete_directories)'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl monitor" cgroup' -l 'cgroup' -d 'A cgroup directory, relative to the root, to watch instead of the process\'s own.' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl monitor" events' -l 'events' -d 'Run the monitor (PSI triggers, adaptive polling) and print its events, not samples.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl monitor" json' -l 'json' -d 'Print a JSON document (stable schema, see `statectl --help`) instead of text.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl monitor" version' -l 'version' -d 'Show the version.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl monitor" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl demo" db' -l 'db' -d 'The state database file. Default: $STATESTORE_DB, else the "statestore-demo" app\'s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl demo" json' -l 'json' -d 'Print a JSON document (stable schema, see `statectl --help`) instead of text.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl demo" key-file' -l 'key-file' -d 'Open sealed states with the key in this file (mode 600 or 400, owned by you).' -rF
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl demo" credential' -l 'credential' -d 'Open sealed states with the systemd credential NAME ($CREDENTIALS_DIRECTORY/NAME).' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl demo" version' -l 'version' -d 'Show the version.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl demo" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl soak" duration' -l 'duration' -d 'How long to run: 90, 90s, 15m, 2h. (default: 60s)' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl soak" controllers' -l 'controllers' -d 'How many distinct controllers the traffic cycles through.' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl soak" db' -l 'db' -d 'The database to use (kept). Default: a fresh one in a temporary folder, removed afterwards.' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl soak" pressure' -l 'pressure' -d 'cgroup, synthetic or none. Default: cgroup when running as root with a writable memory cgroup, else synthetic.' -rfka 'cgroup synthetic none'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl soak" memory-limit' -l 'memory-limit' -d 'The harness\'s memory (cgroup limit, or the synthetic total). (default: 256MiB)' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl soak" ballast' -l 'ballast' -d 'What makes the waves in cgroup mode: auto, worker or stress-ng. Default (auto): statestore-worker when it is beside statectl, else stress-ng when installed.' -rfka 'auto worker stress-ng'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl soak" seed' -l 'seed' -d 'Seed of the traffic: the same seed replays the same operations.' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl soak" report' -l 'report' -d 'Write an SVG timeline of the run to this file.' -rfka ''
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl soak" json' -l 'json' -d 'Print the summary as a JSON document.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl soak" quiet' -l 'quiet' -d 'No progress line and no text summary (invariants that broke still go to stderr).'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl soak" version' -l 'version' -d 'Show the version.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl soak" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'statectl' -n '__statectl_should_offer_completions_for_flags_or_options "statectl help" version' -l 'version' -d 'Show the version.'

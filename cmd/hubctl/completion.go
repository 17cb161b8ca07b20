package main

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strings"
)

// runCompletion prints a shell completion script built from the command
// table: command words at every level, and the global flags.
func runCompletion(_ context.Context, c *cli, args []string) error {
	fs := c.flags("completion")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("give one shell: bash, zsh or fish")
	}
	next := c.nextWords()
	switch pos[0] {
	case "bash":
		c.writeBash(next)
	case "zsh":
		fmt.Fprint(c.out, "#compdef hubctl\nautoload -U +X bashcompinit && bashcompinit\n")
		c.writeBash(next)
	case "fish":
		c.writeFish(next)
	default:
		return usageErrorf("unknown shell %q: give bash, zsh or fish", pos[0])
	}
	return nil
}

// nextWords maps each command prefix ("" for the first word, "agent",
// "agent token") to the words that may follow it, sorted.
func (c *cli) nextWords() map[string][]string {
	set := map[string]map[string]bool{"": {"help": true, "version": true}}
	for name := range c.commands {
		words := strings.Fields(name)
		for i, w := range words {
			prefix := strings.Join(words[:i], " ")
			if set[prefix] == nil {
				set[prefix] = map[string]bool{}
			}
			set[prefix][w] = true
		}
	}
	out := make(map[string][]string, len(set))
	for prefix, ws := range set {
		for w := range ws {
			out[prefix] = append(out[prefix], w)
		}
		sort.Strings(out[prefix])
	}
	return out
}

// globalFlagNames returns the global flags as --name, and which of them
// take no value.
func (c *cli) globalFlagNames() (names, bools []string) {
	fs := flag.NewFlagSet("hubctl", flag.ContinueOnError)
	c.globalFlags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		if len(f.Name) == 1 {
			names = append(names, "-"+f.Name)
		} else {
			names = append(names, "--"+f.Name)
		}
		if isBool(f) {
			bools = append(bools, "--"+f.Name, "-"+f.Name)
		}
	})
	return names, bools
}

// writeBash writes a bash completion function: the words typed so far,
// flags and their values left out, select the candidates.
func (c *cli) writeBash(next map[string][]string) {
	w := c.out
	flags, bools := c.globalFlagNames()
	prefixes := make([]string, 0, len(next))
	for p := range next {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	fmt.Fprint(w, `# hubctl completion for bash: source <(hubctl completion bash)
_hubctl() {
	local cur=${COMP_WORDS[COMP_CWORD]} words="" i w skip=0
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if ((skip)); then skip=0; continue; fi
		case $w in
		`+strings.Join(bools, "|")+` | -*=*) continue ;;
		-*) skip=1; continue ;; # a flag whose value is the next word
		esac
		words="${words:+$words }$w"
	done
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "`+strings.Join(flags, " ")+`" -- "$cur"))
		return
	fi
	case $words in
`)
	for _, p := range prefixes {
		fmt.Fprintf(w, "\t%q) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", p, strings.Join(next[p], " "))
	}
	fmt.Fprint(w, "\t*) COMPREPLY=() ;;\n\tesac\n}\ncomplete -o default -F _hubctl hubctl\n")
}

// writeFish writes fish completions: each word is offered after the word
// it follows, with the command's summary when it is a whole command.
func (c *cli) writeFish(next map[string][]string) {
	fmt.Fprintln(c.out, "# hubctl completion for fish: hubctl completion fish | source")
	fmt.Fprintln(c.out, "complete -c hubctl -f")
	names, _ := c.globalFlagNames()
	for _, name := range names {
		if n := strings.TrimLeft(name, "-"); len(n) == 1 {
			fmt.Fprintf(c.out, "complete -c hubctl -s %s\n", n)
		} else {
			fmt.Fprintf(c.out, "complete -c hubctl -l %s\n", n)
		}
	}
	prefixes := make([]string, 0, len(next))
	for p := range next {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	for _, p := range prefixes {
		cond := "__fish_use_subcommand"
		if p != "" {
			words := strings.Fields(p)
			cond = "__fish_seen_subcommand_from " + words[len(words)-1]
		}
		for _, word := range next[p] {
			desc := ""
			if cmd, ok := c.commands[strings.TrimSpace(p+" "+word)]; ok {
				desc = cmd.summary
			}
			fmt.Fprintf(c.out, "complete -c hubctl -n %q -a %q -d %q\n", cond, word, desc)
		}
	}
}

package main

import "github.com/spf13/cobra"

// commands lists the subcommands; each lives in a file named after it, with
// its config (bind), and logs at g's level.
func commands(g *globalFlags) []*cobra.Command {
	return []*cobra.Command{
		natsCmd(g),
		rolesCmd(),
		imapserverCmd(g),
		producerCmd(g),
		aggregatorCmd(g),
		reporterCmd(g),
		stepCmd(g),
		rampCmd(g),
		runCmd(g),
		demoCmd(g),
		tailCmd(),
		compareCmd(),
		seedCmd(g),
		observeCmd(g),
	}
}

package main

import "github.com/spf13/cobra"

// commands lists the subcommands; each lives in a file named after it.
func commands() []*cobra.Command {
	return []*cobra.Command{
		natsCmd(),
		rolesCmd(),
		imapserverCmd(),
		producerCmd(),
		aggregatorCmd(),
		reporterCmd(),
		stepCmd(),
		rampCmd(),
		demoCmd(),
		tailCmd(),
		compareCmd(),
	}
}

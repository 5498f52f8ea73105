package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// secretVar declares a flag that holds a secret, bound to p, and its
// <name>-file twin. A flag's value is shown to every user of the host by the
// process list (ps, /proc/<pid>/cmdline), so the twin reads the secret from a
// file; both can also come from the environment (IMAPLOAD_<NAME>,
// IMAPLOAD_<NAME>_FILE), which only the process's own user can read.
// readSecretFiles sets p from the file.
func secretVar(fs *pflag.FlagSet, p *string, name, value, usage string) {
	fs.StringVar(p, name, value, usage)
	file := name + "-file"
	fs.String(file, "", fmt.Sprintf("file holding --%s; unlike the flag, not shown by ps", name))
	_ = fs.SetAnnotation(name, annotSecret, []string{name})
	_ = fs.SetAnnotation(file, annotSecret, []string{name})
}

// annotSecret names, on a secret flag and on its -file twin, the secret
// flag they both set.
const annotSecret = "imapload-secret"

// secretOf returns the secret flag f sets (itself, or the one it is the
// -file of), "" for any other flag.
func secretOf(f *pflag.Flag) string {
	if a := f.Annotations[annotSecret]; len(a) == 1 {
		return a[0]
	}
	return ""
}

// secretsGiven returns the secrets given on the command line, by either of
// their flags: the environment then sets neither, as a flag beats its
// variable.
func secretsGiven(fs *pflag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) {
		if s := secretOf(f); s != "" {
			given[s] = true
		}
	})
	return given
}

// readSecretFiles sets every secret flag whose -file was given from that
// file. Giving a secret both ways (flags or environment) is a usage error.
func readSecretFiles(fs *pflag.FlagSet) error {
	var err error
	fs.Visit(func(f *pflag.Flag) {
		secret := secretOf(f)
		if err != nil || secret == "" || secret == f.Name || f.Value.String() == "" {
			return
		}
		if fs.Changed(secret) {
			err = usage(fmt.Errorf("give --%s or --%s, not both (as flags or as %s and %s)",
				secret, f.Name, envName(secret), envName(f.Name)))
			return
		}
		var pw string
		if pw, err = readSecretFile(f.Name, f.Value.String()); err == nil {
			err = fs.Set(secret, pw)
		}
	})
	return err
}

// readSecretFile returns the secret in path: its one line, without the
// newline that ends it. Its errors name the file, never its content.
func readSecretFile(flag, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--%s: %w", flag, err)
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	switch {
	case s == "":
		return "", fmt.Errorf("--%s %s: %w", flag, path, errEmptySecret)
	case strings.ContainsAny(s, "\r\n"):
		return "", fmt.Errorf("--%s %s: %w", flag, path, errSecretLines)
	}
	return s, nil
}

var (
	errEmptySecret = errors.New("the file is empty; it must hold the secret")
	errSecretLines = errors.New("the file holds more than one line; it must hold the secret alone")
)

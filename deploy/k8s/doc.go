// Package k8s holds imapload's Kubernetes manifests (the YAML files beside
// this one; secrets/ and helm/ hold templates and the NATS chart's values)
// and, in its tests, their offline validation: no cluster runs in CI, so the
// tests decode every manifest strictly with the Kubernetes API types and
// check it against the imapload binary built from this tree — the image and
// entrypoint, each container's subcommand, flags and IMAPLOAD_* variables,
// the health probes against --health-listen, and every ConfigMap, Secret,
// key and volume a pod refers to. See README.md beside this file.
//
// The package has no code of its own.
package k8s

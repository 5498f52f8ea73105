package pipeline

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/embedded"
	"github.com/nats-io/nats.go"
)

// server is where the roles meet: the embedded NATS, or the URL of another.
type server struct {
	cfg   *config
	ns    *embedded.NATS // nil with cfg.NATS
	temp  string         // a temporary store to remove, "" for none
	creds string         // the credentials directory, "" without Listen
	conns []*nats.Conn
}

// start starts the embedded server, or does nothing for an existing one.
func (s *server) start() error {
	if s.cfg.NATS != "" {
		return nil
	}
	store := s.cfg.StoreDir
	if store == "" {
		dir, err := os.MkdirTemp("", "imapload-"+s.cfg.TempName+"-nats-")
		if err != nil {
			return fmt.Errorf("pipeline: NATS store: %w", err)
		}
		s.temp, store = dir, dir
	}
	o, err := s.options(store)
	if err != nil {
		return err
	}
	s.ns, err = embedded.StartNATS(o)
	return err
}

// options are the embedded server's: on a free loopback port without
// Listen; with it, from a nats.conf that admits the roles' NKey users only.
func (s *server) options(store string) (*embedded.NATSOptions, error) {
	if s.cfg.Listen == "" {
		return &embedded.NATSOptions{StoreDir: store}, nil
	}
	s.creds = filepath.Join(store, "credentials")
	conf, err := writeCredentials(s.creds, store, s.cfg.Listen, append(s.cfg.local, s.cfg.remote...), s.cfg.observers())
	if err != nil {
		return nil, err
	}
	return &embedded.NATSOptions{ConfigFile: conf, StoreDir: store, Host: s.cfg.host, Port: s.cfg.port}, nil
}

// connect opens a connection of role's own (its NKey user with Listen),
// named name as a separate process would be.
func (s *server) connect(role, name string) (*nats.Conn, error) {
	nc, err := s.dial(role, name)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %s: %w", name, err)
	}
	s.conns = append(s.conns, nc)
	return nc, nil
}

func (s *server) dial(role, name string) (*nats.Conn, error) {
	if s.ns == nil {
		return bus.Connect(s.cfg.NATS, name, s.cfg.NATSCreds, s.cfg.NATSOptions...)
	}
	opts := []nats.Option{nats.Name(name)}
	if s.creds != "" {
		seed, err := nats.NkeyOptionFromSeed(bus.SeedFile(s.creds, role))
		if err != nil {
			return nil, err
		}
		opts = append(opts, seed)
	}
	return s.ns.Connect(opts...)
}

// endpoint says where the server is and how producers join it.
func (s *server) endpoint() Endpoint {
	if s.ns == nil {
		return Endpoint{URL: bus.Redact(s.cfg.NATS)}
	}
	e := Endpoint{URL: joinURL(s.ns.ClientURL()), Embedded: true, Credentials: s.creds}
	if s.creds != "" {
		e.Remote = s.cfg.remote
	}
	return e
}

// joinURL is u with an unspecified host (0.0.0.0, ::) replaced by this
// host's name, which other hosts can dial.
func joinURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	if ip := net.ParseIP(p.Hostname()); ip == nil || !ip.IsUnspecified() {
		return u
	}
	host, err := os.Hostname()
	if err != nil {
		return u
	}
	p.Host = net.JoinHostPort(host, p.Port())
	return p.String()
}

// close closes every connection, shuts the server down and removes a
// temporary store.
func (s *server) close() {
	for _, nc := range s.conns {
		nc.Close()
	}
	if s.ns != nil {
		s.ns.Shutdown()
	}
	if s.temp != "" {
		os.RemoveAll(s.temp)
	}
}

package embedded

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// NATSOptions configures StartNATS. A nil *NATSOptions is invalid because
// StoreDir is required (or a ConfigFile that sets it); every other zero field
// means its default.
type NATSOptions struct {
	// ConfigFile, when set, is a nats-server configuration file (as written
	// by `imapload roles`) that the server starts from instead of the
	// defaults below. Host, Port, StoreDir and the sync policy, when set
	// here, override the file's; every other field but the logging ones is
	// ignored. JetStream is always on, and a store directory is required from
	// the file or StoreDir.
	ConfigFile string
	// Name is the server name. Default "imapload", except for a cluster
	// node, whose name is required: JetStream tells its peers apart by name,
	// so each node needs its own, and the same one across restarts.
	Name string
	// ClusterName, when set, makes the server a node of the NATS cluster of
	// that name, with JetStream clustered: streams and buckets may then have
	// up to as many replicas as there are nodes. It needs ClusterListen and,
	// on every node, the same Routes. With ConfigFile, the cluster settings
	// given here replace the file's.
	ClusterName string
	// ClusterListen is the host:port the other nodes' routes connect to
	// (port 0 picks a random free one, which only a lone seed node can use).
	ClusterListen string
	// Routes are the nodes' cluster addresses, nats-route://host:port; the
	// same list on every node, its own included (a route to itself is
	// dropped). Their number sets the size of JetStream's meta group, whose
	// majority must be up for any stream to be created.
	Routes []string
	// Host is the listen address. Default "127.0.0.1".
	Host string
	// Port is the client port. 0 (the default) picks a random free port,
	// like -1 does for nats-server; with ConfigFile, 0 keeps the file's port
	// and -1 picks a random one.
	Port int
	// StoreDir is the JetStream storage directory. Required: an empty value
	// returns ErrNoStoreDir rather than sharing $TMPDIR/jetstream with every
	// other process. Tests pass t.TempDir().
	StoreDir string
	// JetStreamMaxMemory caps memory-backed streams, in bytes. Default 256 MiB.
	JetStreamMaxMemory int64
	// JetStreamMaxStore caps file-backed streams, in bytes. Default 2 GiB.
	JetStreamMaxStore int64
	// MaxPayload is the largest message the server accepts, in bytes.
	// Default 1 MiB, the outer bound on every decoded batch.
	MaxPayload int32
	// DontListen serves in-process clients only: no TCP port is opened and
	// Connect uses nats.InProcessServer.
	DontListen bool
	// SyncAlways makes JetStream fsync every write; SyncInterval, when
	// positive, sets the interval between fsyncs. Neither: the server's
	// default (2 minutes) or the file's. See deploy/nats/README.md.
	SyncAlways   bool
	SyncInterval time.Duration
	// User and Password, when User is set, require this user/password pair
	// from every client. Connect supplies them; ClientURL never contains them.
	User, Password string
	// Logf receives the server log. Default: no logging.
	Logf func(format string, args ...any)
	// Debug turns on debug logging (to Logf, or to stderr without Logf).
	Debug bool
	// ReadyTimeout bounds the wait for the server to accept connections.
	// Default 5 s.
	ReadyTimeout time.Duration
}

// NATS is a running in-process nats-server with JetStream.
type NATS struct {
	ns   *server.Server
	opts NATSOptions
	once sync.Once
}

// StartNATS starts nats-server with JetStream and returns once it accepts
// connections (this does I/O). Call Shutdown when done.
func StartNATS(opts *NATSOptions) (*NATS, error) {
	if opts == nil || (opts.StoreDir == "" && opts.ConfigFile == "") {
		return nil, ErrNoStoreDir
	}
	o := opts.withDefaults()
	so, err := o.serverOptions()
	if err != nil {
		return nil, err
	}
	if err := o.applyCluster(so); err != nil {
		return nil, err
	}
	ns, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("embedded: new NATS server: %w", err)
	}
	o.configureLogger(ns)
	ns.Start()
	if !ns.ReadyForConnections(o.ReadyTimeout) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, notReady(so, o.ReadyTimeout)
	}
	return &NATS{ns: ns, opts: o}, nil
}

// notReady is the error of a server that did not become ready: most often
// its port is taken, which it says.
func notReady(so *server.Options, wait time.Duration) error {
	if !so.DontListen && so.Port > 0 {
		addr := net.JoinHostPort(so.Host, strconv.Itoa(so.Port))
		if ln, err := net.Listen("tcp", addr); err != nil {
			if errors.Is(err, syscall.EADDRINUSE) {
				return fmt.Errorf("%w: NATS: %s: address in use", ErrNotReady, addr)
			}
		} else {
			ln.Close()
		}
	}
	return fmt.Errorf("%w: NATS after %v", ErrNotReady, wait)
}

func (o NATSOptions) withDefaults() NATSOptions {
	if o.Name == "" && o.ClusterName == "" && o.ConfigFile == "" {
		o.Name = "imapload"
	}
	if o.Host == "" && o.ConfigFile == "" {
		o.Host = "127.0.0.1"
	}
	if o.Port == 0 && o.ConfigFile == "" {
		o.Port = server.RANDOM_PORT
	}
	if o.JetStreamMaxMemory == 0 {
		o.JetStreamMaxMemory = 256 << 20
	}
	if o.JetStreamMaxStore == 0 {
		o.JetStreamMaxStore = 2 << 30
	}
	if o.MaxPayload == 0 {
		o.MaxPayload = 1 << 20
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 5 * time.Second
	}
	return o
}

// serverOptions are the server's options: from ConfigFile with this
// NATSOptions' overrides, or from this NATSOptions alone.
func (o NATSOptions) serverOptions() (*server.Options, error) {
	if o.ConfigFile == "" {
		so := o.defaultServerOptions()
		o.applySync(so)
		return so, nil
	}
	if o.User != "" {
		return nil, fmt.Errorf("%w: User with ConfigFile: give the users in the file", ErrBadOption)
	}
	so, err := server.ProcessConfigFile(o.ConfigFile)
	if err != nil {
		return nil, fmt.Errorf("embedded: NATS config: %w", err)
	}
	o.override(so)
	if so.StoreDir == "" {
		return nil, fmt.Errorf("%w: %s sets no jetstream store_dir", ErrNoStoreDir, o.ConfigFile)
	}
	return so, nil
}

// override applies to options read from ConfigFile the fields set here.
func (o NATSOptions) override(so *server.Options) {
	if o.Host != "" {
		so.Host = o.Host
	}
	if o.Port != 0 {
		so.Port = o.Port
	}
	if o.StoreDir != "" {
		so.StoreDir = o.StoreDir
	}
	if so.ServerName == "" {
		so.ServerName = o.Name
	}
	if so.ServerName == "" && so.Cluster.Port == 0 && o.ClusterName == "" {
		so.ServerName = "imapload" // a cluster node's name is never defaulted
	}
	o.applySync(so)
	so.JetStream, so.DontListen, so.NoSigs = true, o.DontListen, true
	so.NoLog, so.Debug = o.Logf == nil && !o.Debug, o.Debug
}

// applySync sets the fsync policy when one is given.
func (o NATSOptions) applySync(so *server.Options) {
	switch {
	case o.SyncAlways:
		so.SyncAlways, so.SyncInterval = true, 2*time.Minute
	case o.SyncInterval > 0:
		so.SyncAlways, so.SyncInterval = false, o.SyncInterval
	}
}

func (o NATSOptions) defaultServerOptions() *server.Options {
	return &server.Options{
		ServerName:         o.Name,
		Host:               o.Host,
		Port:               o.Port,
		DontListen:         o.DontListen,
		JetStream:          true,
		StoreDir:           o.StoreDir,
		JetStreamMaxMemory: o.JetStreamMaxMemory,
		JetStreamMaxStore:  o.JetStreamMaxStore,
		MaxPayload:         o.MaxPayload,
		Username:           o.User,
		Password:           o.Password,
		NoSigs:             true,
		NoLog:              o.Logf == nil && !o.Debug,
		Debug:              o.Debug,
	}
}

// configureLogger routes the server log to Logf, or to stderr when only
// Debug is set; by default the server logs nothing.
func (o NATSOptions) configureLogger(ns *server.Server) {
	switch {
	case o.Logf != nil:
		ns.SetLogger(natsLogger(o.Logf), o.Debug, false)
	case o.Debug:
		ns.ConfigureLogger()
	}
}

// applyCluster makes so a cluster node when ClusterName is set, and checks
// that a cluster node, from the options or the file, has a name.
func (o NATSOptions) applyCluster(so *server.Options) error {
	if o.ClusterName == "" {
		if o.ClusterListen != "" || len(o.Routes) > 0 {
			return fmt.Errorf("%w: ClusterListen or Routes without ClusterName", ErrBadOption)
		}
	} else if err := o.clusterOptions(so); err != nil {
		return err
	}
	if so.Cluster.Port != 0 && so.ServerName == "" {
		return fmt.Errorf("%w: a cluster node needs a server name of its own", ErrBadOption)
	}
	return nil
}

// clusterOptions sets so's cluster listener and routes from o.
func (o NATSOptions) clusterOptions(so *server.Options) error {
	host, portStr, err := net.SplitHostPort(o.ClusterListen)
	if err != nil {
		return fmt.Errorf("%w: ClusterListen %q: %v", ErrBadOption, o.ClusterListen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return fmt.Errorf("%w: ClusterListen %q: bad port", ErrBadOption, o.ClusterListen)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	routes, err := ParseRoutes(o.Routes)
	if err != nil {
		return err
	}
	so.Cluster.Name, so.Cluster.Host, so.Cluster.Port = o.ClusterName, host, port
	so.Routes = routes
	return nil
}

// ParseRoutes parses cluster route URLs, nats-route://host:port (or
// nats://), each entry possibly itself a comma-separated list, and refuses
// any other form.
func ParseRoutes(routes []string) ([]*url.URL, error) {
	var out []*url.URL
	for _, r := range strings.Split(strings.Join(routes, ","), ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		u, err := url.Parse(r)
		if err != nil || (u.Scheme != "nats-route" && u.Scheme != "nats") || u.Port() == "" || u.Hostname() == "" {
			return nil, fmt.Errorf("%w: route %q: want nats-route://host:port", ErrBadOption, r)
		}
		out = append(out, u)
	}
	return out, nil
}

// ClientURL returns the nats:// URL clients connect to. It never contains
// credentials. With DontListen nothing listens there: use Connect.
func (n *NATS) ClientURL() string { return n.ns.ClientURL() }

// RouteURL returns the nats-route:// URL other cluster nodes connect to, or
// "" when the server is not a cluster node.
func (n *NATS) RouteURL() string {
	addr := n.ns.ClusterAddr()
	if addr == nil {
		return ""
	}
	return "nats-route://" + addr.String()
}

// Server returns the underlying nats-server.
func (n *NATS) Server() *server.Server { return n.ns }

// Connect opens a nats.go connection to this server, supplying the
// configured credentials and, with DontListen, the in-process pipe. Options
// in opts are applied last and win.
func (n *NATS) Connect(opts ...nats.Option) (*nats.Conn, error) {
	var base []nats.Option
	if n.opts.User != "" {
		base = append(base, nats.UserInfo(n.opts.User, n.opts.Password))
	}
	if n.opts.DontListen {
		base = append(base, nats.InProcessServer(n.ns))
	}
	nc, err := nats.Connect(n.ns.ClientURL(), append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("embedded: connect to NATS: %w", err)
	}
	return nc, nil
}

// Shutdown stops the server and waits until it has stopped. Calling it
// again does nothing.
func (n *NATS) Shutdown() {
	n.once.Do(func() {
		n.ns.Shutdown()
		n.ns.WaitForShutdown()
	})
}

// natsLogger adapts a printf-style function to server.Logger.
type natsLogger func(format string, args ...any)

func (l natsLogger) Noticef(format string, v ...any) { l("[INF] "+format, v...) }
func (l natsLogger) Warnf(format string, v ...any)   { l("[WRN] "+format, v...) }
func (l natsLogger) Fatalf(format string, v ...any)  { l("[FTL] "+format, v...) }
func (l natsLogger) Errorf(format string, v ...any)  { l("[ERR] "+format, v...) }
func (l natsLogger) Debugf(format string, v ...any)  { l("[DBG] "+format, v...) }
func (l natsLogger) Tracef(format string, v ...any)  { l("[TRC] "+format, v...) }

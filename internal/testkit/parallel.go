package testkit

import (
	"flag"
	"strconv"
)

// SetParallel sets -test.parallel to n unless the command line set it.
// Call it from TestMain, before m.Run, in packages whose parallel tests
// mostly wait (on servers, processes, outages): the default, GOMAXPROCS,
// would leave the CPU idle and run them a pair at a time on two cores.
func SetParallel(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}

package health

import "errors"

// ErrListen is returned, wrapped, when the endpoint's address cannot be
// bound.
var ErrListen = errors.New("health: cannot listen")

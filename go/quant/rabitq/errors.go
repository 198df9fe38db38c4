package rabitq

import "errors"

// ErrInvalidArgument marks a call with arguments the quantizer cannot use.
var ErrInvalidArgument = errors.New("rabitq: invalid argument")

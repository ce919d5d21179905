package web_test

import (
	"os"
	"time"
)

var lookupEnv = os.LookupEnv

// t0 and t1 bound "all time" for statements in tests.
func t0() time.Time { return time.Unix(0, 0) }
func t1() time.Time { return time.Now().Add(24 * time.Hour) }

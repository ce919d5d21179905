package web_test

import "os"

var lookupEnv = os.LookupEnv

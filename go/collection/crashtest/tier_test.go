package crashtest

import "os"

// tierEnv picks the size of the crash tests: unset for the quick run of
// go test ./..., "ci" for make crash-ci, "soak" for make soak.
const tierEnv = "STRATA_CRASH_TIER"

func tier(quick, ci, soak int) int {
	switch os.Getenv(tierEnv) {
	case "ci":
		return ci
	case "soak":
		return soak
	}
	return quick
}

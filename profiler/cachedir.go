package profiler

import (
	"fmt"
	"os"
	"path/filepath"
)

// CacheDirEnv names the folder of everything mltop keeps between runs
// (calibrations, include views, the MSL emulation's precompiled header,
// the CUDA kernel cache unless MLTOP_CUDA_CACHE names another).
const CacheDirEnv = "MLTOP_CACHE_DIR"

// CacheDir is mltop's cache folder, $MLTOP_CACHE_DIR or else the user
// cache folder's mltop (~/.cache/mltop on Linux, ~/Library/Caches/mltop on
// macOS), joined with sub. It is not made: the caller makes what it
// writes. The error says that neither is known (no $HOME).
func CacheDir(sub ...string) (string, error) {
	dir := os.Getenv(CacheDirEnv)
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("mltop's cache folder: %w; set %s to a folder mltop may write in", err, CacheDirEnv)
		}
		dir = filepath.Join(base, "mltop")
	}
	return filepath.Join(append([]string{dir}, sub...)...), nil
}

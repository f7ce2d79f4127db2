## Test harness shared by all areas.  Unit tests are Check programs named
## tests/unit/check_<area>; integration tests are tests/integration/<area>-*.sh|.py
## run by automake's parallel driver (exit 77 = skip, 99 = hard error).
## Each area adds its own tests in its fragment (src/*.mk, tracer/tracer.mk, ...).
EXTRA_DIST += tests/integration/lib.sh tests/integration/sbtest.py

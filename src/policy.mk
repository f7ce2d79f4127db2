## The policy language: parser, includes, ${}, every key, compiled lookups.
noinst_LIBRARIES += src/libsbpolicy.a
src_libsbpolicy_a_SOURCES = src/policy.h

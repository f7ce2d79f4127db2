## Learning, audit, the JSON decision log, policy drift.
noinst_LIBRARIES += src/libsblearn.a
src_libsblearn_a_SOURCES = src/learn.h src/log.h

/*
 * core/version.h - the version string of every binary built from this tree.
 *
 * Release builds pass -DEO_VERSION="\"v1.2.3\"" (e.g. from `git describe`); everything else
 * reports a development version.
 */
#ifndef EO_CORE_VERSION_H
#define EO_CORE_VERSION_H

#ifndef EO_VERSION
#define EO_VERSION "v0.0.0-dev"
#endif

#endif /* EO_CORE_VERSION_H */

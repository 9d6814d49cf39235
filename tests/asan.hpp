// File: tests/asan.hpp
// HETSIM_TEST_ASAN: 1 in a build under AddressSanitizer, whose terabytes of shadow memory no
// address-space limit (ulimit -v) can hold; tests of such limits skip there.
#pragma once

// AddressSanitizer: GCC says so with __SANITIZE_ADDRESS__, clang (scripts/configure-sanitize) with
// __has_feature(address_sanitizer).
#if defined(__SANITIZE_ADDRESS__)
#define HETSIM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HETSIM_TEST_ASAN 1
#endif
#endif
#ifndef HETSIM_TEST_ASAN
#define HETSIM_TEST_ASAN 0
#endif

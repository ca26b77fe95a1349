/* SPDX-License-Identifier: MIT */
/* Fixture: a header that is there. */

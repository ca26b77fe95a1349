/* SPDX-License-Identifier: MIT */
/* Fixture: a header private to proto. */

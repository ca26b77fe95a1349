#!/bin/sh
. tests/lib/lib.sh

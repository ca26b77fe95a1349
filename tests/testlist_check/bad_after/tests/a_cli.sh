#!/bin/sh
. tests/lib.sh

#!/bin/sh
# A tree of subshells, three deep, each writing a file.
level() {
  if [ "$1" -gt 0 ]; then
    ( level $(($1 - 1)) "$2.a" ) &
    ( level $(($1 - 1)) "$2.b" ) &
    wait
  fi
  echo "$2" > "node$2.txt"
}
level 3 ""
ls node*.txt | wc -l

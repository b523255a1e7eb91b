#!/bin/sh
# umask and modes of what the program creates.
umask 027
mkdir d1; touch f1; (umask 0; mkdir d2; touch f2)
stat -c '%n %a' d1 f1 d2 f2

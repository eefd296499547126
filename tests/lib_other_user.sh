# tests/lib_other_user.sh: sourced by tests that run a command as a user who
# may not write the test's folders. Sets as_other to the prefix that runs a
# command as another user (setpriv to nobody when root; nothing needed when
# not root), or to "none" where there is no way (root without setpriv).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
    as_other="setpriv --reuid=65534 --regid=65534 --clear-groups"
elif [ "$(id -u)" != 0 ]; then
    as_other=""
else
    as_other=none
fi

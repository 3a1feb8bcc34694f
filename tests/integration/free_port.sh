# Sourced by the integration scripts: free_port prints a loopback port
# nothing listens on, below the kernel's ephemeral range (32768+), where a
# client socket could already hold it.
free_port() {
  local p
  while :; do
    p=$(( RANDOM % 12000 + 20000 ))
    (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo "$p"; return; }
  done
}

# Sourced by the test scripts: free_port prints a free loopback TCP port.
free_port() {
  local p
  while :; do
    # Below the kernel's ephemeral range (32768+), where a client socket
    # could already hold the port.
    p=$(( RANDOM % 12000 + 20000 ))
    (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo "$p"; return; }
  done
}

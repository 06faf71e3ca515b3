# Relays each TCP connection to 127.0.0.1:PORT (inside a container's own network namespace) to
# a unix socket: how tests/integration/test_state.py brings the mock model, forwarded to the
# seat as a unix socket by `ssh -R`, within reach of a session on the seat. Perl because the
# image has it (perl-base) and nothing else is needed.   usage: perl tcp_to_unix.pl PORT SOCKET
use strict;
use warnings;
use IO::Socket::INET;
use IO::Socket::UNIX;
use IO::Select;

my ($port, $path) = @ARGV;
my $listener = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Listen => 16, ReuseAddr => 1)
  or die "listen 127.0.0.1:$port: $!";
$SIG{CHLD} = 'IGNORE';
while (my $client = $listener->accept) {
  my $pid = fork;
  if (!defined $pid || $pid) { close $client; next; }
  close $listener;
  my $upstream = IO::Socket::UNIX->new(Peer => $path) or exit 1;
  my $select = IO::Select->new($client, $upstream);
  my $open = 2;
  while ($open > 0) {
    for my $from ($select->can_read) {
      my $to = $from == $client ? $upstream : $client;
      my $n = sysread($from, my $buf, 65536);
      if (!$n) { $select->remove($from); $open--; shutdown($to, 1); next; }
      for (my $off = 0; $off < $n;) {
        my $w = syswrite($to, $buf, $n - $off, $off);
        exit 0 unless defined $w;
        $off += $w;
      }
    }
  }
  exit 0;
}

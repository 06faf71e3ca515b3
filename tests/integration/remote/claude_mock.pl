# A two-turn mock of the Anthropic Messages API for Claude Code (the protocol of
# tests/mock_model/server.py, docs/MOCK-MODEL.md), in Perl because the seat and the image have
# perl-base and no python. Started by a dispatched session's own command next to claude, on the
# container's loopback (network none). A request that carries a tool_result → the text FINAL;
# one that offers the Bash tool → a tool_use of Bash with COMMAND; any other (a title, a quota
# check) → the text "mock"; count_tokens and every other path → a small JSON answer.
# One line per request on stderr.   usage: perl claude_mock.pl PORT COMMAND FINAL
use strict;
use warnings;
use IO::Socket::INET;

my ($port, $command, $final) = @ARGV;
my $listener = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Listen => 8, ReuseAddr => 1)
  or die "listen 127.0.0.1:$port: $!";

sub jstr { my $s = shift; $s =~ s/(["\\])/\\$1/g; $s =~ s/\n/\\n/g; $s =~ s/([\x00-\x1f])/sprintf("\\u%04x", ord $1)/ge; "\"$s\"" }
sub sse { my ($event, $json) = @_; "event: $event\ndata: $json\n\n" }

# (request line, body); the body as sent (a chunked one with its chunk lines: only searched).
sub read_request {
  my $c = shift;
  my $head = '';
  while ($head !~ /\r\n\r\n/) { my $n = sysread($c, my $b, 1); return unless $n; $head .= $b }
  my ($line) = $head =~ /^(\S+ \S+)/;
  my $body = '';
  if ($head =~ /^content-length:\s*(\d+)/im) {
    my $left = $1;
    while ($left > 0) { my $n = sysread($c, my $b, $left > 65536 ? 65536 : $left); last unless $n; $body .= $b; $left -= $n }
  } elsif ($head =~ /^transfer-encoding:\s*chunked/im) {
    while ($body !~ /(^|\r\n)0\r\n\r\n$/) { my $n = sysread($c, my $b, 65536); last unless $n; $body .= $b }
  }
  return ($line, $body);
}

sub reply {
  my ($c, $type, $payload) = @_;
  syswrite($c, "HTTP/1.1 200 OK\r\nContent-Type: $type\r\nContent-Length: " . length($payload) .
               "\r\nConnection: close\r\n\r\n$payload");
  close $c;
}

# The content blocks of the answer: ([type, id-or-undef, text-or-input-json]), stop reason.
sub answer {
  my $body = shift;
  return ([['text', undef, $final]], 'end_turn') if $body =~ /"tool_result"/;
  return ([['tool_use', 'toolu_mock_1', '{"command":' . jstr($command) . '}']], 'tool_use')
    if $body =~ /"name"\s*:\s*"Bash"/;
  return ([['text', undef, 'mock']], 'end_turn');
}

sub events {
  my ($n, $blocks, $stop) = @_;
  my @ev = (sse('message_start', qq({"type":"message_start","message":{"id":"msg_mock_$n","type":"message","role":"assistant","model":"mock-model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}})));
  my $i = 0;
  for my $b (@$blocks) {
    my ($type, $id, $data) = @$b;
    my ($start, $delta) = $type eq 'tool_use'
      ? (qq({"type":"tool_use","id":"$id","name":"Bash","input":{}}), qq({"type":"input_json_delta","partial_json":) . jstr($data) . '}')
      : (q({"type":"text","text":""}), qq({"type":"text_delta","text":) . jstr($data) . '}');
    push @ev, sse('content_block_start', qq({"type":"content_block_start","index":$i,"content_block":$start}));
    push @ev, sse('content_block_delta', qq({"type":"content_block_delta","index":$i,"delta":$delta}));
    push @ev, sse('content_block_stop', qq({"type":"content_block_stop","index":$i}));
    $i++;
  }
  push @ev, sse('message_delta', qq({"type":"message_delta","delta":{"stop_reason":"$stop","stop_sequence":null},"usage":{"output_tokens":5}}));
  push @ev, sse('message_stop', q({"type":"message_stop"}));
  return join('', @ev);
}

sub message_json {
  my ($n, $blocks, $stop) = @_;
  my @content = map { $_->[0] eq 'tool_use'
    ? qq({"type":"tool_use","id":"$_->[1]","name":"Bash","input":$_->[2]})
    : qq({"type":"text","text":) . jstr($_->[2]) . '}' } @$blocks;
  return qq({"id":"msg_mock_$n","type":"message","role":"assistant","model":"mock-model","content":[) . join(',', @content) .
         qq(],"stop_reason":"$stop","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}});
}

my $n = 0;
while (my $c = $listener->accept) {
  my ($line, $body) = read_request($c);
  next unless defined $line;
  $n++;
  print STDERR "mock: $line\n";
  if ($line =~ m{^POST \S*/v1/messages/count_tokens}) { reply($c, 'application/json', '{"input_tokens":10}'); next }
  if ($line !~ m{^POST \S*/v1/messages}) { reply($c, 'application/json', '{}'); next }
  my ($blocks, $stop) = answer($body);
  if ($body =~ /"stream"\s*:\s*true/) {
    syswrite($c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n" .
                 events($n, $blocks, $stop));
    close $c;
  } else {
    reply($c, 'application/json', message_json($n, $blocks, $stop));
  }
}

# A mock of the Anthropic Messages API for a claude TUI conversation of several prompts (the protocol
# of tests/mock_model/server.py, docs/MOCK-MODEL.md), in Perl because the seat and the image have
# perl-base and no python (tests/integration/remote/claude_mock.pl serves one-prompt runs). Started
# by a session's own command next to claude, on the container's loopback. Each prompt is one
# conversation turn: a request offering the Bash tool gets a tool_use of COMMAND, the request that
# carries its tool_result gets FINAL; side requests (titles, quotas) get a short text. Every tool
# call has an id of its own (claude interrupts a conversation that reuses one).
# One line per request on stderr.   usage: perl claude_tui_mock.pl PORT COMMAND FINAL
use strict;
use warnings;
use IO::Socket::INET;

my ($port, $command, $final) = @ARGV;
my $listener = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Listen => 16, ReuseAddr => 1)
  or die "listen 127.0.0.1:$port: $!";

sub jstr { my $s = shift; $s =~ s/(["\\])/\\$1/g; $s =~ s/\n/\\n/g; $s =~ s/([\x00-\x1f])/sprintf("\\u%04x", ord $1)/ge; "\"$s\"" }
sub sse { my ($event, $json) = @_; "event: $event\ndata: $json\n\n" }

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
    my $raw = '';
    while ($raw !~ /(^|\r\n)0\r\n\r\n$/) { my $n = sysread($c, my $b, 65536); last unless $n; $raw .= $b }
    $body = $raw;
  }
  return ($line, $body);
}

# 2: the last user message carries a tool_result; 1: an agent request (offers Bash); 0: a side request.
sub turn_of {
  my $body = shift;
  my $at = rindex($body, '"role":"user"');
  return 2 if $at >= 0 && index($body, '"type":"tool_result"', $at) >= 0;
  return 1 if $body =~ /"name":"Bash"/;
  return 0;
}

sub reply {
  my ($c, $type, $data) = @_;
  syswrite($c, "HTTP/1.1 200 OK\r\nContent-Type: $type\r\nContent-Length: " . length($data) . "\r\nConnection: close\r\n\r\n$data");
}

my $n = 0;
while (my $c = $listener->accept) {
  my ($line, $body) = read_request($c);
  unless (defined $line) { close $c; next }
  print STDERR "mock: $line\n";
  if ($line =~ m{^POST \S*/v1/messages/count_tokens}) { reply($c, 'application/json', '{"input_tokens":10}'); close $c; next }
  if ($line !~ m{^POST \S*/v1/messages}) { reply($c, 'application/json', '{}'); close $c; next }
  $n++;
  my $turn = turn_of($body);
  my ($block, $delta, $stop);
  if ($turn == 1) {
    $block = qq({"type":"tool_use","id":"toolu_mock_$n","name":"Bash","input":{}});
    $delta = '{"type":"input_json_delta","partial_json":' . jstr('{"command":' . jstr($command) . '}') . '}';
    $stop = 'tool_use';
  } else {
    my $text = jstr($turn == 2 ? $final : 'mock');
    $block = '{"type":"text","text":""}';
    $delta = qq({"type":"text_delta","text":$text});
    $stop = 'end_turn';
  }
  if ($body !~ /"stream":true/) {
    my $content = $turn == 1 ? qq([{"type":"tool_use","id":"toolu_mock_$n","name":"Bash","input":{"command":) . jstr($command) . '}}]'
                             : '[{"type":"text","text":' . jstr($turn == 2 ? $final : 'mock') . '}]';
    reply($c, 'application/json', qq({"id":"msg_mock_$n","type":"message","role":"assistant","model":"mock-model","content":$content,"stop_reason":"$stop","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}));
    close $c;
    next;
  }
  my $msg = qq({"id":"msg_mock_$n","type":"message","role":"assistant","model":"mock-model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}});
  my $events = sse('message_start', qq({"type":"message_start","message":$msg}))
    . sse('content_block_start', qq({"type":"content_block_start","index":0,"content_block":$block}))
    . sse('content_block_delta', qq({"type":"content_block_delta","index":0,"delta":$delta}))
    . sse('content_block_stop', '{"type":"content_block_stop","index":0}')
    . sse('message_delta', qq({"type":"message_delta","delta":{"stop_reason":"$stop","stop_sequence":null},"usage":{"output_tokens":5}}))
    . sse('message_stop', '{"type":"message_stop"}');
  syswrite($c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n$events");
  close $c;
}

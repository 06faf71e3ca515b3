# A two-turn mock of the OpenAI Responses API for codex (the protocol of tests/mock_model/server.py,
# docs/MOCK-MODEL.md), in Perl because the seat and the image have perl-base and no python.
# Runs on a seat in a container of its own with network none; a session joins its namespace
# (--network container:NAME) and reaches it at 127.0.0.1:PORT. POST n°1 → a function_call of
# exec_command with COMMAND; POST n°2 → an assistant message with FINAL. One line per request
# on stderr.   usage: perl codex_mock.pl PORT COMMAND FINAL
use strict;
use warnings;
use IO::Socket::INET;

my ($port, $command, $final) = @ARGV;
my $listener = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Listen => 8, ReuseAddr => 1)
  or die "listen 127.0.0.1:$port: $!";

sub jstr { my $s = shift; $s =~ s/(["\\])/\\$1/g; $s =~ s/\n/\\n/g; $s =~ s/([\x00-\x1f])/sprintf("\\u%04x", ord $1)/ge; "\"$s\"" }
sub sse { my ($event, $json) = @_; "event: $event\ndata: $json\n\n" }

sub read_request {
  my $c = shift;
  my $head = '';
  while ($head !~ /\r\n\r\n/) { my $n = sysread($c, my $b, 1); return undef unless $n; $head .= $b }
  my ($line) = $head =~ /^(\S+ \S+)/;
  if ($head =~ /^content-length:\s*(\d+)/im) {
    my $left = $1;
    while ($left > 0) { my $n = sysread($c, my $b, $left > 65536 ? 65536 : $left); last unless $n; $left -= $n }
  } elsif ($head =~ /^transfer-encoding:\s*chunked/im) {
    my $body = '';
    while ($body !~ /(^|\r\n)0\r\n\r\n$/) { my $n = sysread($c, my $b, 65536); last unless $n; $body .= $b }
  }
  return $line;
}

my $turn = 0;
while (my $c = $listener->accept) {
  my $line = read_request($c) // next;
  print STDERR "mock: $line\n";
  if ($line !~ m{^POST \S*/responses}) {
    syswrite($c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
    close $c;
    next;
  }
  $turn++;
  my $id = "resp_mock_$turn";
  my @events = (sse("response.created", qq({"type":"response.created","response":{"id":"$id","model":"mock-model","status":"in_progress"}})));
  my $item;
  if ($turn == 1) {
    my $args = jstr('{"cmd":' . jstr($command) . '}');
    $item = qq({"type":"function_call","id":"fc_mock_1","call_id":"call_mock_1","name":"exec_command","arguments":$args,"status":"completed"});
  } else {
    my $text = jstr($final);
    push @events, sse("response.output_text.delta", qq({"type":"response.output_text.delta","item_id":"msg_mock","output_index":0,"content_index":0,"delta":$text}));
    $item = qq({"type":"message","id":"msg_mock","role":"assistant","status":"completed","content":[{"type":"output_text","text":$text,"annotations":[]}]});
  }
  push @events, sse("response.output_item.added", qq({"type":"response.output_item.added","output_index":0,"item":$item}));
  push @events, sse("response.output_item.done", qq({"type":"response.output_item.done","output_index":0,"item":$item}));
  push @events, sse("response.completed", qq({"type":"response.completed","response":{"id":"$id","model":"mock-model","status":"completed","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":15}}}));
  syswrite($c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n" . join('', @events));
  close $c;
}

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The man pages, the --help texts and the option tables agree.

The pages under BUILD/man are made from each command's --help (make man,
tools/mkman.py), so they cannot drift from it; what can drift is the
code: an option added to a parser and not to its usage text. Checked:
  - every command 'rocemu help' lists has a page, every page a command;
  - --help and -h print to stdout and exit 0, with the same sections
    (Options:, Exit status:) in every command; 'rocemu help CMD' prints
    the same; a bad option exits 2 with a message on stderr only;
  - 'rocemu --version', 'rocemu version', 'rocemu-agent --version' print
    "rocemu VERSION" (the Makefile's);
  - each page's OPTIONS lists exactly the options of its --help;
  - the options each parser in the C sources accepts (struct option
    tables, getopt short-option strings, strcmp against "-x" literals)
    are exactly those its --help lists;
  - every ROCEMU_* variable the code reads is in a page's ENVIRONMENT;
  - groff renders every page without a warning.
usage: tests/lint/man_drift.py BUILD_DIR
"""
import os
import re
import shutil
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# The C files whose parsers make up each command's options.
SOURCES = {
    'dump': ['emu/cli/cmd_dump.c'],
    'check': ['emu/cli/cmd_check.c'],
    'replay': ['emu/cli/cmd_replay.c'],
    'ladder': ['emu/cli/cmd_ladder.c'],
    'conform': ['emu/cli/cmd_conform.c'],
    'ping': ['emu/cli/cmd_ping.c', 'emu/cli/cli_conn.c'],
    'perf': ['emu/cli/cmd_perf.c', 'emu/cli/cli_conn.c'],
    'demo': ['emu/cli/cmd_demo.c'],
    'run': ['emu/cli/cmd_run.c'],
    'impair': ['emu/cli/cmd_impair.c'],
    'agent': ['conformance/agent/main.c'],
    '': ['emu/cli/rocemu.c'],
}

fails = []


def bad(msg):
    fails.append(msg)
    print('FAIL: ' + msg)


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def sections(text):
    """{title: [lines]} of a usage text: 'Title:' lines start sections."""
    out, cur = {}, None
    for line in text.split('\n'):
        m = re.match(r'^([A-Z][A-Za-z ]*):$', line)
        if m:
            cur = m.group(1)
            out[cur] = []
        elif cur:
            out[cur].append(line)
    return out


def help_options(text):
    """The option names the Options: section of a usage text lists."""
    opts = set()
    for line in sections(text).get('Options', []):
        m = re.match(r'^  (-\S.*?)(?:\s{2,}|$)', line)
        if m:
            opts.update(re.findall(r'(?<![\w-])(--?[A-Za-z0-9][\w-]*)',
                                   m.group(1)))
    return opts


def page_options(path):
    """The option names of a page's OPTIONS section (.TP tag lines)."""
    opts, in_opts, tag_next = set(), False, False
    for line in open(path, encoding='utf-8'):
        line = line.rstrip('\n')
        if line.startswith('.SH'):
            in_opts = line.strip() in ('.SH OPTIONS', '.SH "OPTIONS"')
        elif in_opts and line.startswith('.TP'):
            tag_next = True
        elif tag_next:
            tag_next = False
            plain = re.sub(r'\\f[BIRP]', '', line).replace('\\-', '-')
            plain = re.sub(r'^\.[BI]R? ', '', plain)
            opts.update(re.findall(r'(?<![\w-])(--?[A-Za-z0-9][\w-]*)', plain))
    return opts


def page_env(path):
    text = open(path, encoding='utf-8').read()
    m = re.search(r'^\.SH ENVIRONMENT\n(.*?)(?=^\.SH |\Z)', text, re.S | re.M)
    return set(re.findall(r'ROCEMU_[A-Z_]+', m.group(1))) if m else set()


def code_options(files):
    """What the parsers in FILES accept: long options of struct option
    tables, letters of getopt short-option strings, "-x" literals that
    argv words are compared with."""
    opts = set()
    for f in files:
        src = open(os.path.join(TOP, f), encoding='utf-8').read()
        for table in re.findall(r'struct option\s+\w+\[\]\s*=\s*\{(.*?)\};',
                                src, re.S):
            opts.update('--' + n for n in
                        re.findall(r'\{\s*"([\w-]+)"\s*,', table))
        for short in re.findall(r'getopt(?:_long)?\([^,]+,[^,]+,\s*"([^"]*)"',
                                src):
            opts.update('-' + ch for ch in short if ch.isalnum())
        opts.update(re.findall(r'strcmp\([^,()]+,\s*"(--?[A-Za-z0-9][\w-]*)"\)',
                               src))
    return opts


def code_env(dirs):
    found = set()
    for d in dirs:
        for root, _, names in os.walk(os.path.join(TOP, d)):
            for n in names:
                if n.endswith('.c'):
                    src = open(os.path.join(root, n), encoding='utf-8').read()
                    found.update(re.findall(r'getenv\("(ROCEMU_[A-Z_]+)"\)',
                                            src))
    return found


def check_help(name, argv, version):
    """--help and -h: stdout, exit 0, the uniform sections; a bad option:
    exit 2, stderr only. Returns the help text."""
    rc, out, err = run(argv + ['--help'])
    if rc != 0 or not out or err:
        bad('%s --help: exit %d, %d bytes out, stderr %r' %
            (name, rc, len(out), err[:80]))
    if not out.startswith('usage: '):
        bad('%s --help: does not start with "usage: "' % name)
    for s in ('Options', 'Exit status'):
        if s not in sections(out):
            bad('%s --help: no "%s:" section' % (name, s))
    if '\n\n' not in out.split('\nOptions:')[0]:
        bad('%s --help: no description paragraph after the synopsis' % name)
    rc2, out2, _ = run(argv + ['-h'])
    if rc2 != 0 or out2 != out:
        bad('%s -h: exit %d, or not the same text as --help' % (name, rc2))
    rc3, out3, err3 = run(argv + ['--no-such-option'])
    if rc3 != 2 or out3 or not err3:
        bad('%s --no-such-option: exit %d (want 2), stdout %d bytes, '
            'stderr %d bytes' % (name, rc3, len(out3), len(err3)))
    return out


def main():
    build = sys.argv[1]
    rocemu = os.path.join(build, 'bin', 'rocemu')
    agent = os.path.join(build, 'bin', 'rocemu-agent')
    man1 = os.path.join(build, 'man', 'man1')
    man7 = os.path.join(build, 'man', 'man7')
    mk = open(os.path.join(TOP, 'Makefile'), encoding='utf-8').read()
    version = re.search(r'^VERSION\s*:?=\s*(\S+)', mk, re.M).group(1)

    for argv in ([rocemu, '--version'], [rocemu, 'version'],
                 [agent, '--version']):
        rc, out, _ = run(argv)
        if rc != 0 or out != 'rocemu %s\n' % version:
            bad('%s %s: exit %d, %r (want "rocemu %s")' %
                (os.path.basename(argv[0]), argv[1], rc, out, version))

    rc, listing, err = run([rocemu, 'help'])
    if rc != 0 or err:
        bad('rocemu help: exit %d, stderr %r' % (rc, err[:80]))
    cmds = [m.group(1) for m in
            (re.match(r'^  ([a-z]+)\s', l)
             for l in sections(listing).get('Commands', [])) if m]
    if set(cmds) != set(k for k in SOURCES if k not in ('', 'agent')):
        bad('rocemu help lists %s; the sources known here are for %s' %
            (sorted(cmds), sorted(k for k in SOURCES if k not in ('', 'agent'))))
    rc, out, _ = run([rocemu, 'help', 'no-such-command'])
    if rc != 2:
        bad('rocemu help no-such-command: exit %d, want 2' % rc)

    texts = {'': check_help('rocemu', [rocemu], version),
             'agent': check_help('rocemu-agent', [agent], version)}
    if texts[''] != listing:
        bad('rocemu --help differs from rocemu help')
    for c in cmds:
        texts[c] = check_help('rocemu ' + c, [rocemu, c], version)
        rc, out, _ = run([rocemu, 'help', c])
        if rc != 0 or out != texts[c]:
            bad('rocemu help %s: exit %d, or not rocemu %s --help' % (c, rc, c))

    pages = {'': 'rocemu.1', 'agent': 'rocemu-agent.1'}
    pages.update((c, 'rocemu-%s.1' % c) for c in cmds)
    have = set(os.listdir(man1)) if os.path.isdir(man1) else set()
    for c, p in pages.items():
        if p not in have:
            bad('no page %s for %s' % (p, c or 'rocemu'))
    for p in sorted(have - set(pages.values())):
        bad('page %s has no command' % p)
    if not os.path.exists(os.path.join(man7, 'rocemu-dropin.7')):
        bad('no page rocemu-dropin.7')

    for c, text in texts.items():
        name = c or 'rocemu'
        helped = help_options(text)
        page = os.path.join(man1, pages[c])
        if os.path.exists(page) and page_options(page) != helped:
            bad('%s: page OPTIONS %s, --help %s' %
                (pages[c], sorted(page_options(page)), sorted(helped)))
        coded = code_options(SOURCES[c])
        if c == '':
            coded |= {'--version'}  # compared in main(), not by strcmp
        if coded - helped:
            bad('%s: the code accepts %s, which --help does not list' %
                (name, sorted(coded - helped)))
        if helped - coded:
            bad('%s: --help lists %s, which the code does not accept' %
                (name, sorted(helped - coded)))

    envs = [(['emu/verbs'], os.path.join(man7, 'rocemu-dropin.7')),
            (['emu/cli'], os.path.join(man1, 'rocemu.1')),
            (['agent'], os.path.join(man1, 'rocemu-agent.1'))]
    for dirs, page in envs:
        if os.path.exists(page):
            missing = code_env(dirs) - page_env(page)
            if missing:
                bad('%s: ENVIRONMENT does not name %s, which %s reads' %
                    (os.path.basename(page), sorted(missing), dirs[0]))

    if shutil.which('groff'):
        for d in (man1, man7):
            for p in sorted(os.listdir(d)) if os.path.isdir(d) else []:
                rc, _, err = run(['groff', '-man', '-ww', '-z',
                                  os.path.join(d, p)])
                if rc or err:
                    bad('groff -ww %s: %s' % (p, err.strip()[:200]))

    print('man_drift: %d commands, %d failures' % (len(texts), len(fails)))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())

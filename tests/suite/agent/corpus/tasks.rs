//! The task corpus: 30 realistic agent tasks, each the runs a model would ask for, in order.
//! `seed` puts the person's own files in the workspace first (not a run of the agent's).
//! Everything runs on the sandbox image as it is: Python's standard library, bash, coreutils,
//! git, curl and pip; the network reaches only the lab's package mirror.

/// What kind of work a task is (a column of the report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Analysis,
    Conversion,
    Cleanup,
    Git,
    Program,
    Network,
    GoesWrong,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Analysis => "data analysis and plots",
            Kind::Conversion => "file conversion and renaming",
            Kind::Cleanup => "cleaning a folder",
            Kind::Git => "git workflow",
            Kind::Program => "writing and testing a program",
            Kind::Network => "network: install and download",
            Kind::GoesWrong => "goes wrong (then undone)",
        }
    }
}

pub struct Task {
    pub name: &'static str,
    pub kind: Kind,
    pub seed: &'static str,
    pub runs: &'static [Run],
}

#[derive(Clone, Copy)]
pub enum Run {
    Py(&'static str),
    Sh(&'static str),
}

use Kind::*;
use Run::{Py, Sh};

const SALES: &str = "mkdir -p data && printf 'region,month,units,price\\nnorth,2025-01,12,4.5\\nsouth,2025-01,7,5.5\\nnorth,2025-02,15,4.5\\nsouth,2025-02,9,5.5\\neast,2025-01,11,6\\neast,2025-02,4,6\\nwest,2025-01,20,3.5\\nwest,2025-02,18,3.5\\n' > data/sales.csv";

pub const TASKS: &[Task] = &[
    // -- data analysis with plots ---------------------------------------------------------
    Task {
        name: "sales summary with a bar chart",
        kind: Analysis,
        seed: SALES,
        runs: &[
            Sh("ls -la data && head -5 data/sales.csv"),
            Py("import csv\nrows = list(csv.DictReader(open('data/sales.csv')))\nprint(len(rows), 'rows', sorted({r['region'] for r in rows}))"),
            Py("import csv, collections\nrevenue = collections.Counter()\nfor r in csv.DictReader(open('data/sales.csv')):\n    revenue[r['region']] += int(r['units']) * float(r['price'])\nfor k, v in revenue.most_common():\n    print(f'{k:6} {v:8.2f}')"),
            Py("import csv, collections, os\nrevenue = collections.Counter()\nfor r in csv.DictReader(open('data/sales.csv')):\n    revenue[r['region']] += int(r['units']) * float(r['price'])\nos.makedirs('out', exist_ok=True)\nwith open('out/revenue.csv', 'w') as f:\n    f.write('region,revenue\\n')\n    for k, v in sorted(revenue.items()):\n        f.write(f'{k},{v:.2f}\\n')\nprint(open('out/revenue.csv').read())"),
            Py("import csv\nrows = list(csv.DictReader(open('out/revenue.csv')))\ntop = max(float(r['revenue']) for r in rows)\nbars = ''.join(f'<rect x=\"{40 + i * 60}\" y=\"{200 - 180 * float(r[\"revenue\"]) / top:.0f}\" width=\"40\" height=\"{180 * float(r[\"revenue\"]) / top:.0f}\" fill=\"steelblue\"/><text x=\"{40 + i * 60}\" y=\"215\" font-size=\"11\">{r[\"region\"]}</text>' for i, r in enumerate(rows))\nopen('out/revenue.svg', 'w').write(f'<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"300\" height=\"220\">{bars}</svg>')\nprint('wrote out/revenue.svg')"),
            Sh("ls -la out && wc -c out/revenue.svg"),
        ],
    },
    Task {
        name: "temperature statistics and a PNG line plot",
        kind: Analysis,
        seed: "python3 -c \"import math\nopen('temps.txt','w').write(''.join(f'{d} {15 + 8 * math.sin(d / 58):.1f}\\n' for d in range(365)))\"",
        runs: &[
            Sh("head -3 temps.txt && wc -l temps.txt"),
            Py("import statistics\nt = [float(l.split()[1]) for l in open('temps.txt')]\nprint('mean', round(statistics.mean(t), 2), 'stdev', round(statistics.stdev(t), 2), 'min', min(t), 'max', max(t))"),
            Py("import struct, zlib\nt = [float(l.split()[1]) for l in open('temps.txt')]\nw, h = 365, 120\nlo, hi = min(t), max(t)\npix = [[255] * w for _ in range(h)]\nfor x, v in enumerate(t):\n    y = int((hi - v) / (hi - lo) * (h - 1))\n    pix[y][x] = 0\nraw = b''.join(b'\\x00' + bytes(row) for row in pix)\ndef chunk(kind, data):\n    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))\npng = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 0, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b'')\nopen('temps.png', 'wb').write(png)\nprint(len(png), 'bytes')"),
            Sh("file temps.png 2>/dev/null || head -c 8 temps.png | od -c | head -1"),
            Py("t = [float(l.split()[1]) for l in open('temps.txt')]\nmonthly = [sum(t[i:i + 30]) / len(t[i:i + 30]) for i in range(0, 365, 30)]\nopen('monthly.csv', 'w').write('block,mean\\n' + ''.join(f'{i},{m:.2f}\\n' for i, m in enumerate(monthly)))\nprint(open('monthly.csv').read())"),
        ],
    },
    Task {
        name: "web server log analysis",
        kind: Analysis,
        seed: "python3 -c \"import random\nrandom.seed(4)\npaths=['/','/login','/api/items','/static/app.js','/missing']\nopen('access.log','w').write(''.join(f'10.0.0.{random.randint(1,40)} - - [24/Nov/2026:10:{m:02d}:00] \\\"GET {random.choice(paths)} HTTP/1.1\\\" {random.choice([200,200,200,404,500])} {random.randint(100,9000)}\\n' for m in range(60) for _ in range(5)))\"",
        runs: &[
            Sh("wc -l access.log && head -3 access.log"),
            Sh("awk '{print $9}' access.log | sort | uniq -c | sort -rn"),
            Sh("awk '{print $7}' access.log | sort | uniq -c | sort -rn | head"),
            Py("import collections, re\nerrors = collections.Counter()\nfor line in open('access.log'):\n    m = re.search(r'\"GET (\\S+) [^\"]*\" (\\d{3})', line)\n    if m and m.group(2) != '200':\n        errors[(m.group(1), m.group(2))] += 1\nfor (path, code), n in errors.most_common(5):\n    print(code, path, n)"),
            Py("import collections\nper_ip = collections.Counter(l.split()[0] for l in open('access.log'))\nwith open('top_clients.txt', 'w') as f:\n    for ip, n in per_ip.most_common(10):\n        f.write(f'{ip} {n}\\n')\nprint(open('top_clients.txt').read())"),
            Sh("mkdir -p report && { echo '# Access log report'; echo; echo 'Top clients:'; sed 's/^/- /' top_clients.txt; } > report/summary.md && cat report/summary.md"),
            Sh("grep -c ' 500 ' access.log"),
        ],
    },
    Task {
        name: "survey results crosstab",
        kind: Analysis,
        seed: "printf 'id,team,satisfaction,remote\\n1,eng,4,yes\\n2,eng,5,yes\\n3,sales,3,no\\n4,sales,2,no\\n5,ops,4,yes\\n6,eng,3,no\\n7,ops,5,yes\\n8,sales,4,yes\\n' > survey.csv",
        runs: &[
            Sh("tr , '\\t' < survey.csv"),
            Py("import csv, collections\nrows = list(csv.DictReader(open('survey.csv')))\nby = collections.defaultdict(list)\nfor r in rows:\n    by[r['team']].append(int(r['satisfaction']))\nfor team, s in sorted(by.items()):\n    print(team, round(sum(s) / len(s), 2), len(s))"),
            Py("import csv, collections\nrows = list(csv.DictReader(open('survey.csv')))\nx = collections.Counter((r['team'], r['remote']) for r in rows)\nteams = sorted({r['team'] for r in rows})\nlines = ['| team | remote | on site |', '|---|---|---|'] + [f'| {t} | {x[(t, \"yes\")]} | {x[(t, \"no\")]} |' for t in teams]\nopen('crosstab.md', 'w').write('\\n'.join(lines) + '\\n')\nprint(open('crosstab.md').read())"),
            Py("import csv, json\nrows = list(csv.DictReader(open('survey.csv')))\njson.dump({'responses': len(rows), 'mean': sum(int(r['satisfaction']) for r in rows) / len(rows)}, open('summary.json', 'w'), indent=2)\nprint(open('summary.json').read())"),
            Sh("cat crosstab.md summary.json"),
        ],
    },
    Task {
        name: "moving average of a time series",
        kind: Analysis,
        seed: "python3 -c \"open('visits.csv','w').write('day,visits\\n' + ''.join(f'{d},{100 + (d * 37) % 50}\\n' for d in range(90)))\"",
        runs: &[
            Sh("head visits.csv; tail -2 visits.csv"),
            Py("import csv\nv = [int(r['visits']) for r in csv.DictReader(open('visits.csv'))]\nma = [sum(v[i - 6:i + 1]) / 7 for i in range(6, len(v))]\nprint(len(ma), round(min(ma), 1), round(max(ma), 1))"),
            Py("import csv\nv = [int(r['visits']) for r in csv.DictReader(open('visits.csv'))]\nma = [sum(v[i - 6:i + 1]) / 7 for i in range(6, len(v))]\nwith open('visits_ma7.csv', 'w') as f:\n    f.write('day,ma7\\n')\n    for i, m in enumerate(ma, start=6):\n        f.write(f'{i},{m:.2f}\\n')\nprint('ok')"),
            Py("import csv\npts = [(int(r['day']), float(r['ma7'])) for r in csv.DictReader(open('visits_ma7.csv'))]\nlo, hi = min(p[1] for p in pts), max(p[1] for p in pts)\npath = ' '.join(f'{x * 4},{150 - (y - lo) / (hi - lo) * 140:.1f}' for x, y in pts)\nopen('visits.svg', 'w').write(f'<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"380\" height=\"160\"><polyline fill=\"none\" stroke=\"black\" points=\"{path}\"/></svg>')\nprint('plotted', len(pts), 'points')"),
            Sh("ls -l visits*"),
            Py("import csv\nma = [float(r['ma7']) for r in csv.DictReader(open('visits_ma7.csv'))]\nprint('trend', 'up' if ma[-1] > ma[0] else 'down')"),
        ],
    },
    // -- file conversion and renaming ----------------------------------------------------------
    Task {
        name: "CSV to JSON",
        kind: Conversion,
        seed: SALES,
        runs: &[
            Sh("head -3 data/sales.csv"),
            Py("import csv, json\nrows = list(csv.DictReader(open('data/sales.csv')))\nfor r in rows:\n    r['units'] = int(r['units'])\n    r['price'] = float(r['price'])\njson.dump(rows, open('data/sales.json', 'w'), indent=1)\nprint(len(rows), 'records')"),
            Py("import json\nrows = json.load(open('data/sales.json'))\nprint(rows[0], type(rows[0]['units']).__name__)"),
            Sh("python3 -m json.tool data/sales.json > /dev/null && echo valid"),
            Sh("ls -l data"),
        ],
    },
    Task {
        name: "JSON records to CSV",
        kind: Conversion,
        seed: "printf '[{\"name\": \"Ada\", \"lang\": \"python\", \"stars\": 5}, {\"name\": \"Linus\", \"lang\": \"c\", \"stars\": 4}, {\"name\": \"Grace\", \"lang\": \"cobol\", \"stars\": 5}]' > people.json",
        runs: &[
            Sh("cat people.json"),
            Py("import json\npeople = json.load(open('people.json'))\nprint(sorted({k for p in people for k in p}))"),
            Py("import csv, json\npeople = json.load(open('people.json'))\nwith open('people.csv', 'w', newline='') as f:\n    w = csv.DictWriter(f, fieldnames=['name', 'lang', 'stars'])\n    w.writeheader()\n    w.writerows(people)\nprint(open('people.csv').read())"),
            Sh("wc -l people.csv"),
            Py("import csv\nrows = list(csv.DictReader(open('people.csv')))\nprint([r['name'] for r in rows if int(r['stars']) == 5])"),
        ],
    },
    Task {
        name: "Markdown notes to HTML",
        kind: Conversion,
        seed: "mkdir -p notes && printf '# Meeting\\n\\n- ship v2\\n- fix login\\n' > notes/monday.md && printf '# Retro\\n\\nWent *well*.\\n' > notes/friday.md",
        runs: &[
            Sh("ls notes && cat notes/*.md"),
            Py("import html, pathlib, re\ndef convert(text):\n    out = []\n    for line in text.splitlines():\n        if line.startswith('# '):\n            out.append(f'<h1>{html.escape(line[2:])}</h1>')\n        elif line.startswith('- '):\n            out.append(f'<li>{html.escape(line[2:])}</li>')\n        elif line:\n            out.append('<p>' + re.sub(r'\\*(.+?)\\*', r'<em>\\1</em>', html.escape(line)) + '</p>')\n    return '\\n'.join(out)\npathlib.Path('site').mkdir(exist_ok=True)\nfor md in pathlib.Path('notes').glob('*.md'):\n    (pathlib.Path('site') / (md.stem + '.html')).write_text(convert(md.read_text()))\n    print('converted', md.name)"),
            Sh("cat site/*.html"),
            Py("import pathlib\nlinks = ''.join(f'<li><a href=\"{p.name}\">{p.stem}</a></li>' for p in sorted(pathlib.Path('site').glob('*.html')))\npathlib.Path('site/index.html').write_text(f'<ul>{links}</ul>')\nprint(pathlib.Path('site/index.html').read_text())"),
            Sh("ls -l site"),
        ],
    },
    Task {
        name: "rename photos by date",
        kind: Conversion,
        seed: "mkdir -p photos && for i in 1 2 3 4 5 6; do printf 'jpeg%d' $i > photos/IMG_000$i.JPG; done && printf 'IMG_0001.JPG 2025-06-01\\nIMG_0002.JPG 2025-06-01\\nIMG_0003.JPG 2025-06-03\\nIMG_0004.JPG 2025-07-14\\nIMG_0005.JPG 2025-07-14\\nIMG_0006.JPG 2025-08-02\\n' > photos/dates.txt",
        runs: &[
            Sh("ls photos && cat photos/dates.txt"),
            Py("dates = dict(l.split() for l in open('photos/dates.txt'))\nfor old, d in sorted(dates.items()):\n    print(old, '->', f'{d}_{old[4:8]}.jpg')"),
            Py("import os\ndates = dict(l.split() for l in open('photos/dates.txt'))\nfor old, d in sorted(dates.items()):\n    os.rename(f'photos/{old}', f'photos/{d}_{old[4:8]}.jpg')\nprint(sorted(os.listdir('photos')))"),
            Sh("mkdir -p photos/2025-06 photos/2025-07 photos/2025-08 && for f in photos/2025-0*_*.jpg; do m=$(basename \"$f\" | cut -c1-7); mv -n \"$f\" \"photos/$m/\"; done && find photos -type f | sort"),
            Sh("ls -R photos"),
        ],
    },
    Task {
        name: "normalise file names",
        kind: Conversion,
        seed: "mkdir -p inbox && touch 'inbox/Quarterly Report (Final).PDF' 'inbox/meeting NOTES.txt' 'inbox/Budget 2026.xlsx' 'inbox/photo 01.JPG'",
        runs: &[
            Sh("ls -1 inbox"),
            Py("import re\nimport os\nfor name in sorted(os.listdir('inbox')):\n    stem, ext = os.path.splitext(name)\n    print(name, '->', re.sub(r'[^a-z0-9]+', '-', stem.lower()).strip('-') + ext.lower())"),
            Py("import os, re\nfor name in sorted(os.listdir('inbox')):\n    stem, ext = os.path.splitext(name)\n    new = re.sub(r'[^a-z0-9]+', '-', stem.lower()).strip('-') + ext.lower()\n    if new != name:\n        os.rename(os.path.join('inbox', name), os.path.join('inbox', new))\nprint(sorted(os.listdir('inbox')))"),
            Sh("ls -1 inbox | grep -c ' ' || true"),
            Sh("ls -1 inbox"),
        ],
    },
    Task {
        name: "re-encode Latin-1 text to UTF-8",
        kind: Conversion,
        seed: "mkdir -p legacy && printf 'Caf\\xe9 cr\\xe8me\\nna\\xefve r\\xe9sum\\xe9\\n' > legacy/menu.txt && printf 'Stra\\xdfe\\n' > legacy/address.txt",
        runs: &[
            Sh("file legacy/* 2>/dev/null || od -c legacy/menu.txt | head -2"),
            Py("import pathlib\nfor p in pathlib.Path('legacy').glob('*.txt'):\n    try:\n        p.read_bytes().decode('utf-8')\n        print(p, 'utf-8')\n    except UnicodeDecodeError:\n        print(p, 'not utf-8')"),
            Sh("mkdir -p utf8 && for f in legacy/*.txt; do iconv -f latin1 -t utf-8 \"$f\" > \"utf8/$(basename \"$f\")\"; done && cat utf8/*"),
            Py("import pathlib\nfor p in pathlib.Path('utf8').glob('*.txt'):\n    print(p, p.read_text(encoding='utf-8').strip())"),
            Sh("diff <(iconv -f latin1 -t utf-8 legacy/menu.txt) utf8/menu.txt && echo same"),
        ],
    },
    // -- cleaning a folder ------------------------------------------------------------------
    Task {
        name: "sort downloads into folders by type",
        kind: Cleanup,
        seed: "mkdir -p downloads && cd downloads && touch a.pdf b.pdf c.png d.jpg e.zip f.txt g.csv h.mp3",
        runs: &[
            Sh("ls downloads"),
            Py("import collections, os\nexts = collections.Counter(os.path.splitext(n)[1] for n in os.listdir('downloads'))\nprint(dict(exts))"),
            Py("import os, shutil\nkinds = {'.pdf': 'documents', '.txt': 'documents', '.csv': 'documents', '.png': 'images', '.jpg': 'images', '.zip': 'archives', '.mp3': 'audio'}\nfor n in sorted(os.listdir('downloads')):\n    p = os.path.join('downloads', n)\n    if os.path.isfile(p):\n        d = os.path.join('downloads', kinds.get(os.path.splitext(n)[1], 'other'))\n        os.makedirs(d, exist_ok=True)\n        shutil.move(p, d)\nfor root, dirs, files in sorted(os.walk('downloads')):\n    print(root, sorted(files))"),
            Sh("find downloads -type f | wc -l"),
            Sh("ls -R downloads"),
        ],
    },
    Task {
        name: "find and remove duplicate files",
        kind: Cleanup,
        seed: "mkdir -p pics/old && printf one > pics/a.jpg && printf one > pics/old/a-copy.jpg && printf two > pics/b.jpg && printf two > pics/b\\ \\(1\\).jpg && printf three > pics/c.jpg",
        runs: &[
            Sh("find pics -type f | sort"),
            Py("import hashlib, os, collections\nby = collections.defaultdict(list)\nfor root, _, files in os.walk('pics'):\n    for f in files:\n        p = os.path.join(root, f)\n        by[hashlib.sha256(open(p, 'rb').read()).hexdigest()].append(p)\nfor h, ps in by.items():\n    if len(ps) > 1:\n        print(sorted(ps))"),
            Py("import hashlib, os, collections, json\nby = collections.defaultdict(list)\nfor root, _, files in os.walk('pics'):\n    for f in files:\n        p = os.path.join(root, f)\n        by[hashlib.sha256(open(p, 'rb').read()).hexdigest()].append(p)\ndupes = [sorted(ps, key=len)[1:] for ps in by.values() if len(ps) > 1]\njson.dump(sorted(p for d in dupes for p in d), open('dupes.json', 'w'))\nprint(open('dupes.json').read())"),
            Py("import json, os\nfor p in json.load(open('dupes.json')):\n    os.remove(p)\n    print('removed', p)"),
            Sh("rmdir pics/old 2>/dev/null; find pics | sort"),
        ],
    },
    Task {
        name: "archive old logs",
        kind: Cleanup,
        seed: "mkdir -p logs && for d in 01 02 03 04 05; do printf 'log of day %s\\n' $d > logs/app-2026-11-$d.log; done && touch -d '40 days ago' logs/app-2026-11-01.log logs/app-2026-11-02.log logs/app-2026-11-03.log",
        runs: &[
            Sh("ls -l logs"),
            Sh("find logs -name '*.log' -mtime +30 | sort"),
            Sh("mkdir -p archive && find logs -name '*.log' -mtime +30 -print0 | sort -z | tar --null -czf archive/logs-old.tar.gz -T - && tar -tzf archive/logs-old.tar.gz"),
            Sh("tar -tzf archive/logs-old.tar.gz | wc -l"),
            Sh("find logs -name '*.log' -mtime +30 -delete && ls logs"),
            Sh("du -sh logs archive"),
        ],
    },
    // -- git workflow -----------------------------------------------------------------------
    Task {
        name: "start a repository, branch and merge",
        kind: Git,
        seed: "mkdir -p proj && printf 'print(\"hello\")\\n' > proj/app.py",
        runs: &[
            Sh("cd /workspace/proj && git init -q -b main && git config user.email agent@example.com && git config user.name Agent && git add -A && git commit -qm 'first version' && git log --oneline"),
            Sh("cd /workspace/proj && git checkout -q -b greeting && printf 'import sys\\nprint(\"hello\", *sys.argv[1:])\\n' > app.py && git commit -qam 'greet by name' && git log --oneline --all"),
            Sh("cd /workspace/proj && python3 app.py world"),
            Sh("cd /workspace/proj && git checkout -q main && git merge -q --no-edit greeting && git log --oneline --graph"),
            Sh("cd /workspace/proj && git branch -d greeting && git status --short && git branch"),
            Sh("cd /workspace/proj && git show --stat HEAD | head -8"),
        ],
    },
    Task {
        name: "fix a bug and commit with a test",
        kind: Git,
        seed: "mkdir -p calc && cd calc && printf 'def add(a, b):\\n    return a - b\\n' > calc.py && git init -q -b main && git config user.email p@example.com && git config user.name Person && git add -A && git commit -qm init",
        runs: &[
            Sh("cd /workspace/calc && git log --oneline && cat calc.py"),
            Sh("cd /workspace/calc && python3 -c 'import calc; print(calc.add(2, 3))'"),
            Py("import pathlib\np = pathlib.Path('calc/calc.py')\np.write_text(p.read_text().replace('return a - b', 'return a + b'))\nprint(p.read_text())"),
            Py("import pathlib\npathlib.Path('calc/test_calc.py').write_text('import unittest\\nimport calc\\n\\nclass T(unittest.TestCase):\\n    def test_add(self):\\n        self.assertEqual(calc.add(2, 3), 5)\\n\\nif __name__ == \"__main__\":\\n    unittest.main()\\n')\nprint('test written')"),
            Sh("cd /workspace/calc && python3 -m unittest -q test_calc"),
            Sh("cd /workspace/calc && git add calc.py test_calc.py && git commit -qm 'add: use + (with a test)' && git log --oneline"),
            Sh("cd /workspace/calc && git diff HEAD~1 --stat"),
        ],
    },
    Task {
        name: "revert a bad commit",
        kind: Git,
        seed: "mkdir -p site && cd site && git init -q -b main && git config user.email p@example.com && git config user.name Person && echo '<h1>Home</h1>' > index.html && git add -A && git commit -qm home && echo '<h1>Hoem</h1>' > index.html && git commit -qam 'typo fix'",
        runs: &[
            Sh("cd /workspace/site && git log --oneline && cat index.html"),
            Sh("cd /workspace/site && git show HEAD --stat && git diff HEAD~1"),
            Sh("cd /workspace/site && git revert --no-edit HEAD && git log --oneline"),
            Sh("cd /workspace/site && cat index.html && git status --short"),
            Sh("cd /workspace/site && git tag v1 && git tag"),
        ],
    },
    // -- writing and testing a small program ------------------------------------------------------
    Task {
        name: "a word-count command with tests",
        kind: Program,
        seed: "printf 'the quick brown fox\\njumps over the lazy dog\\nthe end\\n' > sample.txt",
        runs: &[
            Py("import pathlib\npathlib.Path('wc.py').write_text('import argparse, collections, sys\\n\\ndef count(text):\\n    return collections.Counter(text.split())\\n\\ndef main(argv=None):\\n    ap = argparse.ArgumentParser()\\n    ap.add_argument(\"file\")\\n    ap.add_argument(\"--top\", type=int, default=3)\\n    a = ap.parse_args(argv)\\n    for w, n in count(open(a.file).read()).most_common(a.top):\\n        print(n, w)\\n\\nif __name__ == \"__main__\":\\n    main()\\n')\nprint('wrote wc.py')"),
            Sh("python3 wc.py sample.txt --top 2"),
            Py("import pathlib\npathlib.Path('test_wc.py').write_text('import unittest, wc\\n\\nclass T(unittest.TestCase):\\n    def test_count(self):\\n        self.assertEqual(wc.count(\"a b a\")[\"a\"], 2)\\n    def test_empty(self):\\n        self.assertEqual(len(wc.count(\"\")), 0)\\n\\nunittest.main()\\n')\nprint('wrote test_wc.py')"),
            Sh("python3 test_wc.py -v 2>&1 | tail -4"),
            Py("import pathlib\np = pathlib.Path('wc.py')\np.write_text(p.read_text().replace('text.split()', 'text.lower().split()'))\nprint('case-insensitive now')"),
            Sh("python3 test_wc.py 2>&1 | tail -1 && python3 wc.py sample.txt"),
            Sh("ls -l *.py"),
        ],
    },
    Task {
        name: "a shell backup script",
        kind: Program,
        seed: "mkdir -p docs && echo plan > docs/plan.txt && echo todo > docs/todo.txt",
        runs: &[
            Sh("printf '#!/bin/bash\\nset -euo pipefail\\nsrc=${1:?source}\\ndest=${2:-backups}\\nmkdir -p \"$dest\"\\nstamp=$(date +%%Y%%m%%d)\\ntar -czf \"$dest/$(basename \"$src\")-$stamp.tar.gz\" \"$src\"\\necho \"$dest/$(basename \"$src\")-$stamp.tar.gz\"\\n' > backup.sh && cat backup.sh"),
            Sh("chmod +x backup.sh && ls -l backup.sh"),
            Sh("./backup.sh docs"),
            Sh("tar -tzf backups/docs-*.tar.gz"),
            Sh("./backup.sh 2>&1 || echo \"exit $?\""),
            Sh("bash -n backup.sh && echo syntax ok"),
        ],
    },
    Task {
        name: "a small inventory module with unittest",
        kind: Program,
        seed: "true",
        runs: &[
            Py("import pathlib\npathlib.Path('inventory').mkdir(exist_ok=True)\npathlib.Path('inventory/__init__.py').write_text('class Inventory:\\n    def __init__(self):\\n        self.items = {}\\n\\n    def add(self, name, n=1):\\n        self.items[name] = self.items.get(name, 0) + n\\n\\n    def remove(self, name, n=1):\\n        if self.items.get(name, 0) < n:\\n            raise ValueError(f\"not enough {name}\")\\n        self.items[name] -= n\\n')\nprint('module written')"),
            Py("import pathlib\npathlib.Path('tests').mkdir(exist_ok=True)\npathlib.Path('tests/__init__.py').write_text('')\npathlib.Path('tests/test_inventory.py').write_text('import unittest\\nfrom inventory import Inventory\\n\\nclass T(unittest.TestCase):\\n    def test_add_remove(self):\\n        i = Inventory()\\n        i.add(\"bolt\", 3)\\n        i.remove(\"bolt\")\\n        self.assertEqual(i.items[\"bolt\"], 2)\\n\\n    def test_remove_too_many(self):\\n        with self.assertRaises(ValueError):\\n            Inventory().remove(\"nut\")\\n')\nprint('tests written')"),
            Sh("python3 -m unittest discover -s tests -t . -v 2>&1 | tail -5"),
            Py("import pathlib\np = pathlib.Path('inventory/__init__.py')\np.write_text(p.read_text() + '\\n    def total(self):\\n        return sum(self.items.values())\\n')\nprint('total() added')"),
            Py("import pathlib\np = pathlib.Path('tests/test_inventory.py')\np.write_text(p.read_text() + '\\n    def test_total(self):\\n        i = Inventory()\\n        i.add(\"a\", 2)\\n        i.add(\"b\")\\n        self.assertEqual(i.total(), 3)\\n')\nprint('test added')"),
            Sh("python3 -m unittest discover -s tests -t . 2>&1 | tail -3"),
            Sh("find . -name '*.py' -not -path './.*' | sort && find . -name __pycache__ -type d | wc -l"),
            Sh("python3 -c 'from inventory import Inventory; i = Inventory(); i.add(\"x\", 4); print(i.total())'"),
        ],
    },
    Task {
        name: "FizzBuzz kata, red then green",
        kind: Program,
        seed: "true",
        runs: &[
            Py("open('test_fizz.py', 'w').write('import unittest\\nfrom fizz import fizz\\n\\nclass T(unittest.TestCase):\\n    def test_values(self):\\n        self.assertEqual([fizz(i) for i in (1, 3, 5, 15)], [\"1\", \"Fizz\", \"Buzz\", \"FizzBuzz\"])\\n\\nunittest.main()\\n')\nprint('test first')"),
            Sh("python3 test_fizz.py 2>&1 | tail -2 || true"),
            Py("open('fizz.py', 'w').write('def fizz(i):\\n    return \"Fizz\" * (i % 3 == 0) + \"Buzz\" * (i % 5 == 0) or str(i)\\n')\nprint('implemented')"),
            Sh("python3 test_fizz.py 2>&1 | tail -1"),
            Sh("python3 -c 'from fizz import fizz; print(\" \".join(fizz(i) for i in range(1, 16)))'"),
        ],
    },
    // -- the network through the allowlist ---------------------------------------------------
    Task {
        name: "install a package from the allowed mirror and use it",
        kind: Network,
        seed: "printf '3\\n1\\n4\\n1\\n5\\n9\\n2\\n6\\n' > numbers.txt",
        runs: &[
            Sh("cat numbers.txt | tr '\\n' ' '"),
            Sh("pip install -q --no-cache-dir --index-url http://pypi.example.internal:8000/simple/ --trusted-host pypi.example.internal --target vendor tinycalc && ls vendor"),
            Py("import sys\nsys.path.insert(0, 'vendor')\nimport tinycalc\nxs = [float(l) for l in open('numbers.txt')]\nprint('mean', tinycalc.mean(xs), 'median', tinycalc.median(xs))"),
            Py("import sys\nsys.path.insert(0, 'vendor')\nimport tinycalc\nxs = [float(l) for l in open('numbers.txt')]\nopen('stats.txt', 'w').write(f'mean={tinycalc.mean(xs)}\\nmedian={tinycalc.median(xs)}\\n')\nprint(open('stats.txt').read())"),
            Sh("ls vendor && cat stats.txt"),
        ],
    },
    Task {
        name: "download a dataset and report on it",
        kind: Network,
        seed: "true",
        runs: &[
            Sh("mkdir -p data && curl -sSf -o data/sales.csv http://data.example.internal:8000/data/sales.csv && wc -l data/sales.csv"),
            Sh("head -4 data/sales.csv"),
            Py("import csv, collections\nu = collections.Counter()\nfor r in csv.DictReader(open('data/sales.csv')):\n    u[r['region']] += int(r['units'])\nprint(dict(u))"),
            Py("import csv, collections\nu = collections.Counter()\nfor r in csv.DictReader(open('data/sales.csv')):\n    u[r['month']] += int(r['units'])\nopen('monthly_units.csv', 'w').write('month,units\\n' + ''.join(f'{m},{n}\\n' for m, n in sorted(u.items())))\nprint(open('monthly_units.csv').read())"),
            Sh("wc -l monthly_units.csv"),
        ],
    },
    Task {
        name: "a script that phones home (refused, then done offline)",
        kind: Network,
        seed: "printf 'alpha\\nbeta\\n' > items.txt",
        runs: &[
            Sh("cat items.txt"),
            Sh("curl -sS -m 5 -X POST --data @items.txt http://tracker.example.internal:8000/collect || echo 'upload failed'"),
            Py("open('items.sorted', 'w').write(''.join(sorted(open('items.txt'))))\nprint(open('items.sorted').read())"),
            Sh("wc -l items.sorted"),
            Sh("cat items.sorted"),
        ],
    },
    // -- more everyday work --------------------------------------------------------------------
    Task {
        name: "extract e-mail addresses from documents",
        kind: Analysis,
        seed: "mkdir -p mail && printf 'Contact ada@example.com or ops@example.org.\\n' > mail/a.txt && printf 'cc: bob@example.com, ada@example.com\\n' > mail/b.txt",
        runs: &[
            Sh("grep -rhoE '[[:alnum:]._%+-]+@[[:alnum:].-]+\\.[a-z]{2,}' mail | sort -u"),
            Py("import pathlib, re\nfound = set()\nfor p in pathlib.Path('mail').glob('*.txt'):\n    found |= set(re.findall(r'[\\w.+-]+@[\\w-]+\\.[\\w.]+', p.read_text()))\nfound = {f.rstrip('.') for f in found}\npathlib.Path('contacts.txt').write_text('\\n'.join(sorted(found)) + '\\n')\nprint(pathlib.Path('contacts.txt').read_text())"),
            Sh("wc -l contacts.txt"),
            Sh("cut -d@ -f2 contacts.txt | sort | uniq -c"),
            Sh("grep -c . contacts.txt"),
        ],
    },
    Task {
        name: "a SQLite database from CSV, queried",
        kind: Analysis,
        seed: SALES,
        runs: &[
            Py("import csv, sqlite3\ndb = sqlite3.connect('sales.db')\ndb.execute('create table if not exists sales(region text, month text, units int, price real)')\ndb.executemany('insert into sales values (?, ?, ?, ?)', [(r['region'], r['month'], int(r['units']), float(r['price'])) for r in csv.DictReader(open('data/sales.csv'))])\ndb.commit()\nprint(db.execute('select count(*) from sales').fetchone())"),
            Py("import sqlite3\ndb = sqlite3.connect('file:sales.db?mode=ro', uri=True)\nfor row in db.execute('select region, sum(units * price) from sales group by region order by 2 desc'):\n    print(row)"),
            Py("import sqlite3\ndb = sqlite3.connect('sales.db')\ndb.execute('create index if not exists by_region on sales(region)')\ndb.commit()\nprint(db.execute('select name from sqlite_master').fetchall())"),
            Sh("ls -l sales.db"),
            Py("import csv, sqlite3\ndb = sqlite3.connect('sales.db')\nwith open('by_month.csv', 'w', newline='') as f:\n    w = csv.writer(f)\n    w.writerow(['month', 'units'])\n    w.writerows(db.execute('select month, sum(units) from sales group by month'))\nprint(open('by_month.csv').read())"),
        ],
    },
    Task {
        name: "find and replace across a project",
        kind: Conversion,
        seed: "mkdir -p src && printf 'from oldname import util\\nutil.run()\\n' > src/main.py && printf 'import oldname\\n' > src/helpers.py && printf 'oldname docs\\n' > README.md",
        runs: &[
            Sh("grep -rn oldname ."),
            Sh("grep -rl oldname src | xargs sed -i 's/oldname/newname/g' && grep -rn newname src"),
            Sh("sed -i 's/oldname/newname/' README.md && cat README.md"),
            Sh("grep -rn oldname . || echo 'no oldname left'"),
            Sh("python3 -c 'import ast, pathlib; [ast.parse(p.read_text()) for p in pathlib.Path(\"src\").glob(\"*.py\")]; print(\"parses\")'"),
        ],
    },
    // -- tasks that go wrong -----------------------------------------------------------------------
    Task {
        name: "deletes the wrong files (the CSVs, not the temp files)",
        kind: GoesWrong,
        seed: "mkdir -p work && printf 'a,b\\n1,2\\n' > work/results.csv && printf 'x\\n' > work/run1.tmp && printf 'y\\n' > work/run2.tmp && printf 'c,d\\n3,4\\n' > work/totals.csv",
        runs: &[
            Sh("ls -l work"),
            Sh("du -ch work/*.tmp | tail -1"),
            Sh("rm -f work/*.csv && ls work"),
            Sh("ls work/*.csv 2>&1 || echo 'the results are gone'"),
            Sh("ls work"),
        ],
    },
    Task {
        name: "overwrites a result with a buggy rerun",
        kind: GoesWrong,
        seed: "printf '3\\n5\\n8\\n' > values.txt",
        runs: &[
            Py("vals = [int(l) for l in open('values.txt')]\nopen('result.txt', 'w').write(f'total={sum(vals)}\\n')\nprint(open('result.txt').read())"),
            Sh("cat result.txt"),
            Py("vals = [int(l) for l in open('values.txt')][1:]\nopen('result.txt', 'w').write(f'total={sum(vals)}\\n')\nprint(open('result.txt').read())"),
            Sh("echo 'total=0' > result.txt && cat result.txt"),
            Sh("cat result.txt values.txt"),
        ],
    },
    Task {
        name: "corrupts a CSV while cleaning it",
        kind: GoesWrong,
        seed: SALES,
        runs: &[
            Sh("head -3 data/sales.csv"),
            Py("lines = open('data/sales.csv').read().splitlines()\nopen('data/sales.csv', 'w').write('\\n'.join(l.replace(',', ';', 2) for l in lines))\nprint(open('data/sales.csv').read()[:80])"),
            Py("import csv\nrows = list(csv.reader(open('data/sales.csv')))\nprint('columns per row:', sorted({len(r) for r in rows}))"),
            Sh("cut -d, -f1 data/sales.csv | head -3"),
            Py("import csv\nprint(sum(1 for _ in csv.reader(open('data/sales.csv'))))"),
        ],
    },
];

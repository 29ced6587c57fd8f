from qizhong.cli import main

raise SystemExit(main())

//! The `projects.*` tools: each a call on [`Projects`], the module's state.

use super::*;

pub(super) fn register(ctx: &Ctx, p: Projects) -> Result<(), crate::kernel::module::StartError> {
    ctx.tool_with(
        ToolDef::new(
            "projects.create",
            "Make a folder a project (writing its .vyre/project.json), or register one that has it already.",
        )
        .onboarding()
        .finishes()
        .person_only(),
        &p,
        |pr, input: CreateInput, _| async move {
                // 1 to 80 characters, not blank: the schema's, checked before this runs.
                let name = input.name.trim().to_string();
                // `~` is the sessions' HOME, as in threads.start; a missing folder says so.
                let sessions_home = pr.ctx.sessions_home().map_err(ToolError::invalid)?;
                let home = crate::kernel::folders::check(&input.home, &sessions_home)?;
                let input = CreateInput { home, ..input };
                let f = match ProjectFile::read(&input.home) {
                    Ok(existing) if existing.name() != name => {
                        return Err(ToolError::conflict(
                            "project_file",
                            format!(
                                "{} declares the project {:?}; use that name to register it",
                                file::path_in(&input.home).display(),
                                existing.name()
                            ),
                        ));
                    }
                    Ok(existing) => existing,
                    Err(file::FileError::Read { source, .. })
                        if source.kind() == std::io::ErrorKind::NotFound =>
                    {
                        let mut f = ProjectFile::new(&input.home, &name, &input.workspaces);
                        if let Some(m) = input.model.as_deref().filter(|m| !m.trim().is_empty()) {
                            f.set_model(m);
                        }
                        f.write().map_err(file_error)?;
                        f
                    }
                    Err(e) => return Err(file_error(e)),
                };
                let home = input.home.display().to_string();
                let (n, h) = (name.clone(), home.clone());
                let taken = pr
                    .ctx
                    .store()
                    .write(move |tx| {
                        let clash: Option<String> = rusqlite::OptionalExtension::optional(tx.conn().query_row(
                            "SELECT home FROM projects_homes WHERE name = ?1 AND home != ?2",
                            params![n, h],
                            |r| r.get(0),
                        ))?;
                        if clash.is_some() {
                            return Ok(clash);
                        }
                        tx.conn().execute(
                            "INSERT INTO projects_homes (name, home, created_at) VALUES (?1, ?2, ?3)
                             ON CONFLICT(home) DO UPDATE SET name = excluded.name",
                            params![n, h, crate::now_ms()],
                        )?;
                        tx.emit(crate::kernel::events::NewEvent::new("project.created", json!({ "project": n, "home": h })))?;
                        Ok(None)
                    })
                    .await?;
                if let Some(other) = taken {
                    return Err(ToolError::conflict(
                        "exists",
                        format!("a project named {name:?} already lives in {other}"),
                    ));
                }
                Ok::<_, ToolError>(ProjectInfo::of(&f))
            },
    )?;

    ctx.tool_with(
        ToolDef::new(
            "projects.list",
            "Every project: its folders, how many threads, last activity.",
        )
        .onboarding()
        .sessions_fenced(),
        &p,
        |pr, _: crate::kernel::tools::NoInput, cx| async move {
            // A session sees the projects it may see, nobody else's.
            let scope = cx.scope(Reach::Projects).await?;
            let mut projects = pr.all().await?;
            projects.retain(|f| scope.sees_project(f.name()));
            let catalogue = pr.catalogue(&projects).await?;
            Ok::<_, ToolError>(
                projects
                    .iter()
                    .map(|f| {
                        let mine: Vec<&Entry> = catalogue
                            .iter()
                            .filter(|e| e.projects.iter().any(|n| n == f.name()))
                            .collect();
                        ProjectInfo {
                            threads: Some(mine.len()),
                            last_activity: mine.iter().filter_map(|e| e.last_activity).max(),
                            ..ProjectInfo::of(f)
                        }
                    })
                    .collect::<Vec<_>>(),
            )
        },
    )?;

    ctx.tool_with(
        ToolDef::new("projects.add-threads", "Pick threads into a project.")
            .onboarding()
            .finishes(),
        &p,
        |pr, input: ThreadsInput, _| async move {
            let mut f = pr.one(&input.project).await?;
            let mut picks = f.picks();
            for t in input.threads {
                if !picks.contains(&t) {
                    picks.push(t);
                }
            }
            f.set_picks(picks.clone());
            f.write().map_err(file_error)?;
            Ok::<_, ToolError>(Picks {
                project: input.project,
                picks,
                still_in_folders: vec![],
            })
        },
    )?;

    ctx.tool_with(
        ToolDef::new(
            "projects.remove-threads",
            "Take threads out of a project's picks (a thread that ran in its folders still belongs).",
        )
        .finishes(),
        &p,
        |pr, input: ThreadsInput, _| async move {
                let mut f = pr.one(&input.project).await?;
                let picks: Vec<String> = f
                    .picks()
                    .into_iter()
                    .filter(|t| !input.threads.contains(t))
                    .collect();
                f.set_picks(picks.clone());
                f.write().map_err(file_error)?;
                let catalogue = pr.project_catalogue(&f).await?;
                let still_in_folders = catalogue
                    .into_iter()
                    .filter(|e| input.threads.contains(&e.thread) && !e.projects.is_empty())
                    .map(|e| e.thread)
                    .collect();
                Ok::<_, ToolError>(Picks {
                    project: input.project,
                    picks,
                    still_in_folders,
                })
            },
    )?;

    ctx.tool_with(
        ToolDef::new(
            "projects.catalog",
            "Every session on this machine (or one project's), newest first: name, first message, folder, last activity, live, source; searchable by what was said.",
        )
        .onboarding()
        .sessions_fenced(),
        &p,
        |pr, input: CatalogInput, cx| async move {
                let limit = input.limit.unwrap_or(200) as usize;
                // A session's catalogue is what it may see: its threads and its projects'.
                let scope = cx.scope(Reach::Threads).await?;
                if let Some(name) = &input.project
                    && !scope.sees_project(name)
                {
                    return Err(crate::kernel::tools::fence::not_your_project(name));
                }
                let projects = pr.all().await?;
                if let Some(name) = &input.project
                    && !projects.iter().any(|f| f.name() == name)
                {
                    return Err(unknown_project(name));
                }
                let said: Option<BTreeSet<String>> = match &input.query {
                    Some(q) => Some(
                        pr.ctx
                            .call("recall.search", json!({ "query": q, "limit": 200, "mode": "words" }))
                            .await?
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|h| h["thread"].as_str().map(String::from))
                            .collect(),
                    ),
                    None => None,
                };
                Ok::<_, ToolError>(
                    pr.catalogue(&projects)
                        .await?
                        .into_iter()
                        .filter(|e| {
                            input
                                .project
                                .as_ref()
                                .is_none_or(|p| e.projects.contains(p))
                        })
                        .filter(|e| said.as_ref().is_none_or(|s| s.contains(&e.thread)))
                        .filter(|e| scope.sees(&e.thread))
                        .take(limit)
                        .collect::<Vec<_>>(),
                )
            },
    )?;

    ctx.tool_with(
        ToolDef::new(
            "projects.get",
            "One project as its file declares it (no session counts): cheap, for launches.",
        )
        .sessions_see_project("project"),
        &p,
        |pr, input: ProjectInput, _| async move {
            let f = pr.one(&input.project).await?;
            Ok::<_, ToolError>(ProjectInfo::of(&f))
        },
    )?;

    ctx.tool_with(
        ToolDef::new(
            "projects.at",
            "The project a folder belongs to, if any: cheap, for hooks.",
        )
        .sessions_fenced()
        .plumbing(),
        &p,
        |pr, input: AtInput, cx| async move {
            let cwd = match input.cwd {
                Some(c) => c,
                // The caller's own folder, from its process (a hook or a plugin command).
                None => match &cx.caller {
                    crate::kernel::tools::Caller::Socket { pid: Some(pid), .. }
                    | crate::kernel::tools::Caller::Session { pid: Some(pid), .. } => {
                        std::fs::read_link(format!("/proc/{pid}/cwd")).map_err(|_| {
                            ToolError::invalid("cannot tell the caller's folder; give cwd")
                        })?
                    }
                    _ => return Err(ToolError::invalid("cwd is needed")),
                },
            };
            let best = pr
                .all()
                .await?
                .into_iter()
                .filter_map(|f| {
                    let depth = f
                        .folders()
                        .iter()
                        .filter(|d| cwd.starts_with(d))
                        .map(|d| d.components().count())
                        .max()?;
                    Some((depth, f))
                })
                .max_by_key(|(depth, _)| *depth)
                .map(|(_, f)| f);
            // A session learns only of projects it may see.
            let scope = cx.scope(Reach::Projects).await?;
            let best = best.filter(|f| scope.sees_project(f.name()));
            Ok::<_, ToolError>(At {
                project: best.as_ref().map(|f| f.name().to_string()),
                home: best.map(|f| f.home.display().to_string()),
            })
        },
    )?;

    ctx.tool_with(
        ToolDef::new(
            "projects.threads",
            "The threads that belong to a project: picked or run in its folders.",
        )
        .sessions_see_project("project"),
        &p,
        |pr, input: ProjectInput, _| async move {
            let f = pr.one(&input.project).await?;
            let catalogue = pr.project_catalogue(&f).await?;
            let mut ids: Vec<String> = catalogue
                .into_iter()
                .filter(|e| !e.projects.is_empty())
                .map(|e| e.thread)
                .collect();
            for pick in f.picks() {
                if !ids.contains(&pick) {
                    ids.push(pick);
                }
            }
            Ok::<_, ToolError>(ids)
        },
    )?;

    ctx.tool_with(
        ToolDef::new(
            "projects.context",
            "What a session in this project may draw on: its folders and its own sessions, never another project's.",
        ).sessions_see_project("project"),
        &p,
        |pr, input: ProjectInput, _| async move {
                let f = pr.one(&input.project).await?;
                let sessions = pr
                    .project_catalogue(&f)
                    .await?
                    .into_iter()
                    .filter(|e| !e.projects.is_empty())
                    .take(20)
                    .collect();
                Ok::<_, ToolError>(Context {
                    project: f.name().to_string(),
                    home: f.home.display().to_string(),
                    folders: f.folders().iter().map(|p| p.display().to_string()).collect(),
                    sessions,
                })
            },
    )?;
    Ok(())
}
